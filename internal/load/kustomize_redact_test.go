package load

import (
	"strings"
	"testing"
)

// TestKustomizeGeneratorContentRedacted: a generator file kustomize cannot
// read (one invalid byte in an envs file) fails the build, and the error
// names the kustomization, the file and its line without quoting the line, which
// holds a Secret's value.
func TestKustomizeGeneratorContentRedacted(t *testing.T) {
	for name, kustomization := range map[string]string{
		"secretGenerator envs":    "secretGenerator:\n- name: db\n  envs:\n  - db.env\n",
		"configMapGenerator envs": "configMapGenerator:\n- name: db\n  envs:\n  - db.env\n",
		"secretGenerator env":     "secretGenerator:\n- name: db\n  env: db.env\n",
	} {
		t.Run(name, func(t *testing.T) {
			got := strings.Join(problemsOf(t, map[string]string{
				"app/kustomization.yaml": kustomization,
				"app/db.env":             "USER=app\nPASSWORD=s3cr3t\xff\n",
			}), "\n")
			if strings.Contains(got, "s3cr3t") || strings.Contains(got, "PASSWORD") {
				t.Errorf("the error quotes the file's content:\n%s", got)
			}
			if !strings.Contains(got, "app/kustomization.yaml") || !strings.Contains(got, "app/db.env:2") {
				t.Errorf("the error does not name the kustomization, the file and its line:\n%s", got)
			}
		})
	}
}

// TestKustomizeLiteralRedacted: a generator literal kustomize refuses is
// not quoted either, a configMapGenerator's included.
func TestKustomizeLiteralRedacted(t *testing.T) {
	got := strings.Join(problemsOf(t, map[string]string{
		"app/kustomization.yaml": "configMapGenerator:\n- name: db\n  literals:\n  - =s3cr3t\n",
	}), "\n")
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "app/kustomization.yaml") || !strings.Contains(got, "literal") {
		t.Errorf("want the kustomization and the literal named, not its value:\n%s", got)
	}
}

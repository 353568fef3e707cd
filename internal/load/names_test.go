package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Names, namespaces, kinds and groups become file names and Git tree
// entries: each case here once reached the render folder or the work branch.
func TestLoadRefusesNamesThatAreNotKubernetesNames(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"name climbing out of the folder", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../../../tmp/x\n",
			`a.yaml:4: metadata.name: "../../../../tmp/x" is invalid: a lowercase RFC 1123 subdomain`},
		{"name with a slash", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a/b\n",
			`a.yaml:4: metadata.name: "a/b" is invalid: a lowercase RFC 1123 subdomain`},
		{"namespace .git", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: .git\n",
			`a.yaml:5: metadata.namespace: ".git" is invalid: a lowercase RFC 1123 label`},
		{"namespace ..", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ..\n",
			`a.yaml:5: metadata.namespace: ".." is invalid: a lowercase RFC 1123 label`},
		{"kind with a slash", "apiVersion: v1\nkind: a/b\nmetadata:\n  name: a\n",
			`a.yaml:2: kind: "a/b" is invalid: a DNS-1035 label`},
		{"kind ..", "apiVersion: example.com/v1\nkind: ..\nmetadata:\n  name: a\n",
			`a.yaml:2: kind: ".." is invalid: a DNS-1035 label`},
		{"kind .git", "apiVersion: example.com/v1\nkind: .git\nmetadata:\n  name: a\n",
			`a.yaml:2: kind: ".git" is invalid: a DNS-1035 label`},
		{"group ..", "apiVersion: ../v1\nkind: Thing\nmetadata:\n  name: a\n",
			`a.yaml:1: apiVersion: ".." is invalid: group a lowercase RFC 1123 subdomain`},
		{"Role name ..", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: ..\n",
			`a.yaml:4: metadata.name: ".." is invalid: may not be '..'`},
		{"Role name with a newline", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: \"a\\nb\"\n",
			`a.yaml:4: metadata.name: "a\nb" is invalid: must not contain control characters`},
		{"Namespace name is a label", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a.b\n",
			`a.yaml:4: metadata.name: "a.b" is invalid: must not contain dots`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, map[string]string{"a.yaml": tc.doc})
			if len(got) == 0 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("problems = %q, want one starting with %q", got, tc.want)
			}
		})
	}
}

func TestLoadAcceptsKubernetesNames(t *testing.T) {
	set := mustLoad(t, map[string]string{"a.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:controller:web
---
apiVersion: example.com/v1alpha1
kind: FooBar
metadata:
  name: a.b-c
  namespace: team-a
`})
	if diff := cmp.Diff([]string{"system:controller:web", "team-a/a.b-c"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
}

func TestLoadRefusesKindsThatDifferOnlyInCase(t *testing.T) {
	got := problemsOf(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"b.yaml": "apiVersion: v1\nkind: configmap\nmetadata:\n  name: a\n",
	})
	want := []string{`b.yaml:1: kind: configmap/default/a collides with ConfigMap/default/a at a.yaml:1: kinds that differ only in case are one object to propagit`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

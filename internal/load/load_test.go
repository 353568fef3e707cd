package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

func TestWalkOrderAndSelection(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"b.yml":                cm("b1") + "---\n" + cm("b2") + "...\n",
		"a/z.yaml":             "---\n# only a comment\n---\n" + cm("az"),
		"a/y.yaml":             cm("ay"),
		".git/config.yaml":     "not: [valid",
		"a/.hidden.yaml":       "not: [valid",
		"notes.txt":            "not: [valid",
		"c/d/deep.yaml":        cm("deep"),
		"empty.yaml":           "",
		"a/README.md":          "# no",
		"c/kustomization.yaml": "resources:\n- cm.yaml\n",
		"c/cm.yaml":            cm("from-kustomize"),
	})
	want := []string{"default/ay", "default/az", "default/b1", "default/b2", "default/from-kustomize"}
	if diff := cmp.Diff(want, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	var sources []string
	for _, tpl := range set.Templates {
		sources = append(sources, tpl.Source.String())
	}
	wantSources := []string{"a/y.yaml:1", "a/z.yaml:4", "b.yml:1", "b.yml:6", "c/kustomization.yaml"}
	if diff := cmp.Diff(wantSources, sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

func TestDocumentProblems(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"invalid YAML has the parser's line", cm("a") + "data:\n  k: [v\n", []string{"a.yaml:6: invalid YAML: did not find expected ',' or ']'"}},
		{"no apiVersion or kind beside an object", cm("a") + "---\nmetadata: {name: x}\n", []string{"a.yaml:6: not a Kubernetes object: apiVersion and kind required"}},
		{"kind without apiVersion", "kind: ConfigMap\nmetadata: {name: x}\n", []string{"a.yaml:1: not a Kubernetes object: apiVersion required"}},
		{"kind not a string", "apiVersion: v1\nkind: [ConfigMap]\nmetadata: {name: x}\n", []string{"a.yaml:2: kind: expected a string, got a list"}},
		{"not a mapping beside an object", cm("a") + "---\n- a\n- b\n", []string{"a.yaml:6: expected a Kubernetes object (a mapping with apiVersion and kind), got a list"}},
		{"malformed object beside a non-object", "site_name: docs\n---\napiVersion: v1\nkind: [ConfigMap]\n",
			[]string{"a.yaml:1: not a Kubernetes object: apiVersion and kind required", "a.yaml:4: kind: expected a string, got a list"}},
		{"invalid apiVersion", "apiVersion: a/b/c\nkind: X\nmetadata: {name: x}\n", []string{`a.yaml:1: apiVersion: "a/b/c" is not a valid apiVersion`}},
		{"template metadata is strict", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: 1}\n", []string{"a.yaml:5: metadata.labels[a]: expected a string, got 1"}},
		{"value JSON cannot hold", cm("a") + "data:\n  k: .nan\n", []string{"a.yaml:6: data.k: .nan cannot be represented in JSON"}},
		{"duplicate key in a template", cm("a") + "data: {k: a, k: b}\n", []string{`a.yaml:5: data.k: duplicate key "k" (first at line 5)`}},
		{"unknown alias", cm("a") + "data: *nope\n", []string{"a.yaml:5: invalid YAML: unknown anchor 'nope' referenced"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemsOf(t, map[string]string{"a.yaml": tt.doc})); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAliasBombFails(t *testing.T) {
	doc := cm("bomb") + "data:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		doc += "  " + n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	got := problemsOf(t, map[string]string{"a.yaml": doc})
	if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "document too large") {
		t.Errorf("got %q, want a 'document too large' problem", got)
	}
}

// TestErrorText pins the text users see for a folder with several problems.
func TestErrorText(t *testing.T) {
	_, err := loadFiles(t, map[string]string{
		"apps/web/policy.yaml": opHead + "      plaintext:\n      - path: /spec/replicas\n        operator: repalce\n        value: 3\n",
		"apps/web/pp.yaml":     ppWith("  placement:\n    clusterAffinity:\n      propagatePriority: 1\n"),
		"clusters/m1.yaml":     clHead + "  syncMode: Push\n  taint: []\n",
		"z.yaml":               cm("a") + "data: [\n",
	})
	want := `apps/web/policy.yaml:10: spec.overrideRules[0].overriders.plaintext[0].operator: "repalce" is not one of add, remove, replace
apps/web/pp.yaml:11: spec.placement.clusterAffinity.propagatePriority: unknown field
clusters/m1.yaml:7: spec.taint: unknown field (did you mean "taints"?)
z.yaml:6: invalid YAML: did not find expected node content`
	var lerr *Error
	if !errors.As(err, &lerr) {
		t.Fatalf("want *Error, got %v", err)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
}

func TestLoadFromDisk(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(dir, p, content string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, "apps/cm.yaml", cm("inside"))
	write(root, "base/kustomization.yaml", "resources:\n- cm.yaml\n")
	write(root, "base/cm.yaml", cm("base"))
	write(root, "overlay/kustomization.yaml", "nameSuffix: -prod\nresources:\n- ../base\n")
	write(outside, "secret.yaml", cm("outside"))
	if err := os.Symlink(outside, filepath.Join(root, "apps", "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	_, err := Load(filesys.MakeFsOnDisk(), root)
	var lerr *Error
	if !errors.As(err, &lerr) {
		t.Fatalf("want *Error for the symlink leaving the folder, got %v", err)
	}
	want := []string{"apps/link: points outside the source folder; it is not read"}
	var got []string
	for _, p := range lerr.Problems {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if err := os.Remove(filepath.Join(root, "apps", "link")); err != nil {
		t.Fatal(err)
	}
	set, err := Load(filesys.MakeFsOnDisk(), root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default/inside", "default/base-prod"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
}

func TestLoadMissingFolder(t *testing.T) {
	_, err := Load(filesys.MakeFsInMemory(), "/nowhere")
	if err == nil || !strings.Contains(err.Error(), "failed to open source folder") {
		t.Errorf("got %v, want a failure to open the folder", err)
	}
}

func TestClusterScoped(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"spec": map[string]any{"group": "example.com", "scope": "Cluster", "names": map[string]any{"kind": "Widget"}},
	}}
	tests := []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, true},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, true},
		{schema.GroupVersionKind{Group: "example.org", Version: "v1", Kind: "Widget"}, false},
		{schema.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterPropagationPolicy"}, true},
	}
	for _, tt := range tests {
		if got := ClusterScoped(tt.gvk, crd); got != tt.want {
			t.Errorf("ClusterScoped(%s) = %v, want %v", tt.gvk, got, tt.want)
		}
	}
	set := &Set{Templates: []Template{{Object: crd}}}
	if !set.ClusterScoped(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}) {
		t.Error("Set.ClusterScoped ignores the set's CRDs")
	}
}

package render

import (
	"testing"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// TestMissingField says which step of an overrider's path the template
// lacks, in dotted form with the closest name, and nothing when the path
// (for add, its parent) is there.
func TestMissingField(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}
	for _, tc := range []struct{ op, path, want string }{
		{"replace", "/spec/replica", "has no field spec.replica; did you mean spec.replicas?"},
		{"replace", "/spec/strategy/rollingUpdate", "has no field spec.strategy"},
		{"replace", "/spec/template/spec/containers/1/image", "has no item spec.template.spec.containers[1]: spec.template.spec.containers holds 1"},
		{"replace", "/spec/replicas/x", "has no field spec.replicas.x: spec.replicas is not an object"},
		{"remove", "/spec/template/spec/containers/0/imag", "has no field spec.template.spec.containers[0].imag; did you mean spec.template.spec.containers[0].image?"},
		{"replace", "/spec/replicas", ""},
		{"add", "/spec/paused", ""},
		{"add", "/spec/template/spec/containers/-", ""},
		{"add", "/spec/strategy/type", "has no field spec.strategy"},
	} {
		if got := missingField(obj, policyv1alpha1.PlaintextOverrider{Path: tc.path, Operator: tc.op}); got != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.op, tc.path, got, tc.want)
		}
	}
}

// TestLocator: with a reader a field's line is found (or its nearest
// written parent's); without one, or for kustomize output (line 0), the
// source stays at the document.
func TestLocator(t *testing.T) {
	file := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: demo\ndata:\n  k: v\n")
	reads := 0
	loc := newLocator(func(p string) ([]byte, error) {
		reads++
		return file, nil
	})
	src := load.Source{Path: "a.yaml", Line: 1}
	for field, want := range map[string]int{"metadata.namespace": 5, "data.k": 7, "data.missing": 6, "nothing.at.all": 1} {
		if got := loc.at(src, field); got != (load.Source{Path: "a.yaml", Line: want}) {
			t.Errorf("%s: got %v, want line %d", field, got, want)
		}
	}
	if reads != 1 {
		t.Errorf("the file was read %d times, want once", reads)
	}
	if got := loc.at(load.Source{Path: "k/kustomization.yaml"}, "data.k"); got.Line != 0 {
		t.Errorf("kustomize output got line %d", got.Line)
	}
	var none *locator
	if got := none.at(src, "data.k"); got != src {
		t.Errorf("no reader: got %v", got)
	}
	if got := newLocator(nil).at(src, "data.k"); got != src {
		t.Errorf("nil reader: got %v", got)
	}
}

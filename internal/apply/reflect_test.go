package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/interpret"
)

// TestReflectStatus pins what a status record keeps of an object's status:
// a customization's statusReflection, a built-in workload's counts, nothing
// for other kinds or oversized results.
func TestReflectStatus(t *testing.T) {
	reflection, err := interpret.Compile("gadget", interpret.StatusReflection,
		"function ReflectStatus(o)\n  return {phase = o.status.phase}\nend", "ric.yaml", 3)
	if err != nil {
		t.Fatal(err)
	}
	ip := interpret.New(interpret.DefaultLimits(), []interpret.Customization{
		{Name: "gadget", APIVersion: "example.com/v1", Kind: "Gadget", Scripts: []*interpret.Script{reflection}}})
	u := func(apiVersion, kind string, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "x", "namespace": "ns"}, "status": status}}
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"a Deployment's counts", u("apps/v1", "Deployment", map[string]any{"replicas": int64(3), "availableReplicas": int64(2),
			"conditions": []any{map[string]any{"type": "Available"}}}), `{"availableReplicas":2,"replicas":3}`},
		{"a customized kind", u("example.com/v1", "Gadget", map[string]any{"phase": "Running", "secret": "x"}), `{"phase":"Running"}`},
		{"a ConfigMap has none", u("v1", "ConfigMap", map[string]any{"replicas": int64(1)}), ``},
		{"too large", u("example.com/v1", "Gadget", map[string]any{"phase": strings.Repeat("x", 4096)}), ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r := reflectStatus(tc.obj, ip); r != nil {
				got = string(r.Raw)
			}
			if got != tc.want {
				t.Errorf("reflected %s, want %s", got, tc.want)
			}
		})
	}
}

package incremental

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/load"
)

// TestTemplateKeysInternBounded: a fleet whose namespaces keep changing
// (a hostile or churning repository) must not grow the interned names
// without bound across revisions: they stay within a few per template.
func TestTemplateKeysInternBounded(t *testing.T) {
	var tk templateKeys
	for rev := range 200 {
		ts := make([]load.Template, 10)
		for i := range ts {
			ts[i] = load.Template{Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "cm", "namespace": fmt.Sprintf("ns-%d-%d", rev, i)}}}}
		}
		order, keys := sortedTemplates(ts, &tk)
		if len(order) != len(ts) || keys[0].Namespace != fmt.Sprintf("ns-%d-0", rev) {
			t.Fatalf("revision %d: keys %v", rev, keys)
		}
		if n := len(tk.names); n > 3*len(ts)+64+3*len(ts) {
			t.Fatalf("revision %d: %d interned names for %d templates", rev, n, len(ts))
		}
	}
}

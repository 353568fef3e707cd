package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// FieldManager owns the fields install applies.
const FieldManager = "propagit"

// WriteYAML prints objs as one YAML stream.
func WriteYAML(w io.Writer, objs []*unstructured.Unstructured) error {
	var buf bytes.Buffer
	for i, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return fmt.Errorf("failed to encode %s: %w", ref(u), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteJSON prints objs as a v1 List, as kubectl get -o json does.
func WriteJSON(w io.Writer, objs []*unstructured.Unstructured) error {
	items := make([]map[string]any, len(objs))
	for i, u := range objs {
		items[i] = u.Object
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// Apply applies objs in order with server-side apply, as FieldManager,
// taking over fields another manager set (an earlier kubectl apply -k),
// and calls applied after each object.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, applied func(ref string)) error {
	for _, u := range objs {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner(FieldManager), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("failed to apply %s: %w", ref(u), err)
		}
		if applied != nil {
			applied(ref(u))
		}
	}
	return nil
}

// ref names an object as every message of propagit does:
// Kind.group/namespace/name (workv1alpha1.ObjectKey.Display).
func ref(u *unstructured.Unstructured) string {
	return workv1alpha1.KeyOf(u).Display()
}

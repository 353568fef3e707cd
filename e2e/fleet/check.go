package fleet

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// object is the part of a rendered object the model predicts.
type object struct {
	kind, name, image   string
	replicas            int64
	labels, annotations map[string]string
}

func objectOf(m map[string]any) object {
	u := unstructured.Unstructured{Object: m}
	o := object{kind: u.GetKind(), name: u.GetName(), labels: u.GetLabels(), annotations: u.GetAnnotations()}
	switch v, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "replicas"); n := v.(type) {
	case int64:
		o.replicas = n
	case int: // kustomize's Map decodes YAML
		o.replicas = int64(n)
	case float64:
		o.replicas = int64(n)
	}
	if cs, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "template", "spec", "containers"); cs != nil {
		if l, ok := cs.([]any); ok && len(l) > 0 {
			if c, ok := l[0].(map[string]any); ok {
				o.image, _ = c["image"].(string)
			}
		}
	}
	return o
}

// Check compares what cluster c received with the model: exactly the
// templates of the groups placed there, each with its overrides applied.
func (m *Model) Check(c int, objs []map[string]any) error {
	name := m.Clusters[c].Name
	if len(objs) != m.objects[c] {
		return fmt.Errorf("cluster %s got %d objects, want %d", name, len(objs), m.objects[c])
	}
	seen := map[string]bool{}
	for _, raw := range objs {
		o := objectOf(raw)
		t := m.byName[o.name]
		if t == nil || t.Kind != o.kind || seen[o.name] || !m.Groups[t.GroupIndex].places(c) {
			return fmt.Errorf("cluster %s got unexpected or duplicate %s %s", name, o.kind, o.name)
		}
		seen[o.name] = true
		w := m.want(t, c)
		switch {
		case o.labels[OwnerLabel] != t.Namespace:
			return fmt.Errorf("cluster %s: %s %s has label %s=%q, want %q", name, o.kind, o.name, OwnerLabel, o.labels[OwnerLabel], t.Namespace)
		case (o.annotations[WindowAnnotation] == WindowValue) != w.annotated:
			return fmt.Errorf("cluster %s: %s %s annotation %s=%q, want it set: %v", name, o.kind, o.name, WindowAnnotation, o.annotations[WindowAnnotation], w.annotated)
		case t.Kind == "Deployment" && (o.replicas != w.replicas || o.image != w.image):
			return fmt.Errorf("cluster %s: Deployment %s has replicas %d image %q, want %d %q", name, o.name, o.replicas, o.image, w.replicas, w.image)
		}
	}
	return nil
}

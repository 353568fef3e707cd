package incremental

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// TestHistoryKeepsOnlyTheLastCall: History remembers the objects and
// templates of the last call only, so a repository whose templates come
// and go does not grow it; a template that comes back is read again.
func TestHistoryKeepsOnlyTheLastCall(t *testing.T) {
	stamped := func(name string) *unstructured.Unstructured {
		key := workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: name}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("app")
		u.SetName(name)
		u.SetAnnotations(map[string]string{workv1alpha1.AnnotationTemplate: key.String()})
		return u
	}
	a, b := stamped("a"), stamped("b")
	h := &History{}
	check := func(step string, objects, templates int) {
		t.Helper()
		if len(h.objects) != objects || len(h.templates) != templates {
			t.Errorf("%s: History holds %d objects and %d templates, want %d and %d", step, len(h.objects), len(h.templates), objects, templates)
		}
	}
	h.Next([]render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{a, b}}, {Cluster: "m2", Objects: []*unstructured.Unstructured{a, b}}})
	check("a and b on two clusters", 2, 2)
	prev := h.Next([]render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{a}}})
	check("a alone", 1, 1)
	if len(prev.Recorded) != 1 || len(prev.Recorded[workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: "a"}]) != 1 {
		t.Errorf("a alone: recorded %v, want a on m1", prev.Recorded)
	}
	prev = h.Next([]render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{a, b}}})
	check("b back", 2, 2)
	if want := render.PreviousFromWorks([]render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{a, b}}}); len(prev.Recorded) != len(want.Recorded) {
		t.Errorf("b back: recorded %d templates, want %d", len(prev.Recorded), len(want.Recorded))
	}
}

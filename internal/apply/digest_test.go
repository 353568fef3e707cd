package apply

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestSubset(t *testing.T) {
	tests := []struct {
		name      string
		want, got any
		contained bool
	}{
		{"equal strings", "a", "a", true},
		{"different strings", "a", "b", false},
		{"YAML float equals apiserver integer", float64(3), int64(3), true},
		{"fractional float is not an integer", 3.5, int64(3), false},
		{"huge float is not compared as an integer", float64(1 << 60), int64(1<<60 + 1), false},
		{"json.Number", json.Number("80"), int64(80), true},
		{"number is not a string", float64(80), "80", false},
		{"server defaults are ignored", map[string]any{"port": float64(80)},
			map[string]any{"port": int64(80), "protocol": "TCP"}, true},
		{"missing key", map[string]any{"a": "1"}, map[string]any{}, false},
		{"null wants the key absent", map[string]any{"a": nil}, map[string]any{}, true},
		{"null wants the key absent, not set", map[string]any{"a": nil}, map[string]any{"a": "x"}, false},
		{"empty map is not a missing one", map[string]any{"a": map[string]any{}}, map[string]any{}, false},
		{"list elements as subsets", []any{map[string]any{"name": "main"}},
			[]any{map[string]any{"name": "main", "imagePullPolicy": "Always"}}, true},
		{"an extra list element differs", []any{"a"}, []any{"a", "b"}, false},
		{"list order matters", []any{"a", "b"}, []any{"b", "a"}, false},
		{"map is not a list", map[string]any{}, []any{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subset(tt.want, tt.got); got != tt.contained {
				t.Fatalf("subset(%v, %v) = %v, want %v", tt.want, tt.got, got, tt.contained)
			}
		})
	}
}

func TestContainsIgnoresMetadataWrittenByOthers(t *testing.T) {
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "n", "labels": map[string]any{"a": "1"}},
		"data":     map[string]any{"k": "v"},
	}}
	if err := stampDigest(desired); err != nil {
		t.Fatal(err)
	}
	live := desired.DeepCopy()
	live.SetResourceVersion("42")
	live.SetLabels(map[string]string{"a": "1", "added-by": "someone"})
	ann := live.GetAnnotations()
	ann["note"] = "someone"
	live.SetAnnotations(ann)
	if !contains(live, desired) {
		t.Fatalf("labels, annotations and metadata added by others must not count as a change")
	}
	live.SetLabels(map[string]string{"added-by": "someone"})
	if contains(live, desired) {
		t.Fatalf("a desired label missing on the member must count as a change")
	}
}

func TestStampDigestIsStableAndIgnoresItself(t *testing.T) {
	a := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"x": "1", "y": "2"}}}
	b := a.DeepCopy()
	if err := stampDigest(a); err != nil {
		t.Fatal(err)
	}
	if err := stampDigest(b); err != nil {
		t.Fatal(err)
	}
	if err := stampDigest(b); err != nil { // stamping again must not change it
		t.Fatal(err)
	}
	da, db := a.GetAnnotations()[workv1alpha1.AnnotationAppliedDigest], b.GetAnnotations()[workv1alpha1.AnnotationAppliedDigest]
	if da == "" || da != db {
		t.Fatalf("digests %q and %q: want equal and set", da, db)
	}
	if err := unstructured.SetNestedField(b.Object, "3", "data", "y"); err != nil {
		t.Fatal(err)
	}
	if err := stampDigest(b); err != nil {
		t.Fatal(err)
	}
	if b.GetAnnotations()[workv1alpha1.AnnotationAppliedDigest] == da {
		t.Fatalf("a changed object must get a different digest")
	}
}

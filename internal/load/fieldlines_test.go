package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFieldLines: every field of the object at a document's (or a List
// item's) first line maps to its own line, keys and list items alike, in
// block and flow style.
func TestFieldLines(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: demo}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  placement:
    clusterAffinity:
      clusterNames: [member1,
        membr2]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
`)
	got := FieldLines(data, 5)
	for field, want := range map[string]int{
		"apiVersion":                                     5,
		"spec.resourceSelectors[0]":                      10,
		"spec.resourceSelectors[0].kind":                 11,
		"spec.placement.clusterAffinity":                 13,
		"spec.placement.clusterAffinity.clusterNames[1]": 15,
	} {
		if got[field] != want {
			t.Errorf("%s at line %d, want %d", field, got[field], want)
		}
	}
	if diff := cmp.Diff(map[string]int{"apiVersion": 20, "kind": 21, "metadata": 22, "metadata.name": 23}, FieldLines(data, 20)); diff != "" {
		t.Errorf("List item (-want +got):\n%s", diff)
	}
	if got := FieldLines(data, 6); got != nil {
		t.Errorf("no object starts at line 6, got %v", got)
	}
}

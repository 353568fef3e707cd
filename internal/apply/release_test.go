package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestPruneReleasesObjectsThatAskToBeKept: an object whose policy said
// preserveResourcesOnDeletion, or whose template says prune: disabled,
// leaves its Work without being deleted: it stays on the member with no
// propagit.io/ label or annotation, and leaves the inventory.
func TestPruneReleasesObjectsThatAskToBeKept(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("release")
	preserved := configMap(t, ns, "preserved", "p")
	preserved.SetAnnotations(map[string]string{workv1alpha1.AnnotationPreserveResourcesOnDeletion: "true",
		workv1alpha1.AnnotationTemplate: "ConfigMap.core/" + ns + "/preserved"})
	noPrune := configMap(t, ns, "no-prune", "n")
	noPrune.SetAnnotations(map[string]string{workv1alpha1.AnnotationPrune: workv1alpha1.PruneDisabled})
	plain := configMap(t, ns, "plain", "x")
	inv := mustApply(t, m, []*unstructured.Unstructured{preserved, noPrune, plain}, nil).Inventory

	res := mustApply(t, m, nil, inv)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"ConfigMap/" + ns + "/preserved": workv1alpha1.ActionReleased,
		"ConfigMap/" + ns + "/no-prune":  workv1alpha1.ActionReleased,
		"ConfigMap/" + ns + "/plain":     workv1alpha1.ActionPruned,
	})
	if len(res.Inventory) != 0 {
		t.Errorf("inventory after release = %v, want empty", res.Inventory)
	}
	for _, kept := range []*unstructured.Unstructured{preserved, noPrune} {
		l := live(t, c, kept)
		for k := range l.GetLabels() {
			if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
				t.Errorf("%s still carries label %s", kept.GetName(), k)
			}
		}
		for k := range l.GetAnnotations() {
			if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
				t.Errorf("%s still carries annotation %s", kept.GetName(), k)
			}
		}
		if got, _, _ := unstructured.NestedString(l.Object, "data", "key"); got == "" {
			t.Errorf("%s lost its data", kept.GetName())
		}
	}
}

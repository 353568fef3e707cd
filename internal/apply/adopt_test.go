package apply

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestHostileAdoptedNamespaceIsNeverPruned: a Namespace someone else made,
// holding a ConfigMap, is taken over with conflictResolution Overwrite; it
// is marked adopted (a template cannot clear the mark), and when its
// template goes it is released, not deleted: the Namespace and the
// ConfigMap stay, without propagit's labels.
func TestHostileAdoptedNamespaceIsNeverPruned(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	name := uniqueNS("hostile-adopt")
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: name}, Data: map[string]string{"k": "v"}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	adopt := func() *unstructured.Unstructured { return managed(namespace(t, name), workv1alpha1.ConflictOverwrite) }
	res := mustApply(t, m, []*unstructured.Unstructured{adopt()}, nil)
	ref := "Namespace/" + name
	assertActions(t, res, map[string]workv1alpha1.Action{ref: workv1alpha1.ActionConfigured})
	if a := live(t, c, adopt()).GetAnnotations()[AnnotationAdopted]; a != "true" {
		t.Errorf("the adopted Namespace carries %s=%q, want \"true\"", AnnotationAdopted, a)
	}

	cleared := adopt()
	ann := cleared.GetAnnotations()
	ann[AnnotationAdopted] = "false"
	cleared.SetAnnotations(ann)
	res = mustApply(t, m, []*unstructured.Unstructured{cleared}, res.Inventory)
	if a := live(t, c, adopt()).GetAnnotations()[AnnotationAdopted]; a != "true" {
		t.Errorf("after a template saying %s=false the live mark is %q, want it kept", AnnotationAdopted, a)
	}

	gone := mustApply(t, m, nil, res.Inventory)
	assertActions(t, gone, map[string]workv1alpha1.Action{ref: workv1alpha1.ActionReleased})
	if msg := messageOf(gone, ref); !strings.Contains(msg, "existed before propagit took it over") {
		t.Errorf("release message %q", msg)
	}
	ns := live(t, c, adopt())
	switch {
	case ns == nil:
		t.Fatal("the adopted Namespace was deleted")
	case ns.GetDeletionTimestamp() != nil:
		t.Fatal("the adopted Namespace is being deleted")
	case ns.GetLabels()[workv1alpha1.LabelManaged] != "" || ns.GetAnnotations()[AnnotationAdopted] != "":
		t.Errorf("the released Namespace keeps propagit's marks: %v %v", ns.GetLabels(), ns.GetAnnotations())
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap in the adopted Namespace: %v", err)
	}
	if len(gone.Inventory) != 0 {
		t.Errorf("the released Namespace stayed in the inventory: %v", gone.Inventory)
	}
}

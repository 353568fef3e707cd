package apply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// createUnmanaged creates u on the member as someone other than propagit,
// without propagit's label and annotations.
func createUnmanaged(t *testing.T, c client.Client, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	u.SetLabels(map[string]string{"owner": "someone"})
	u.SetAnnotations(nil)
	if err := c.Create(t.Context(), u, client.FieldOwner("someone")); err != nil {
		t.Fatalf("create %s: %v", fmtRef(workv1alpha1.RefOf(u)), err)
	}
	return live(t, c, u)
}

func TestApplyAbortRefusesExistingUnmanagedObject(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("abort")
	mustApply(t, m, []*unstructured.Unstructured{namespace(t, ns)}, nil)
	before := createUnmanaged(t, c, deployment(t, ns, "web", "theirs:1"))

	// No conflict annotation at all means abort, as in Karmada.
	web := deployment(t, ns, "web", "ours:2")
	ann := web.GetAnnotations()
	delete(ann, workv1alpha1.AnnotationConflict)
	web.SetAnnotations(ann)
	other := configMap(t, ns, "other", "1")
	res := mustApply(t, m, []*unstructured.Unstructured{web, other}, nil)

	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionFailed, "ConfigMap/" + ns + "/other": workv1alpha1.ActionCreated})
	want := "Deployment.apps/" + ns + "/web already exists on the member and propagit did not create it; " +
		"set conflictResolution: Overwrite in the policy to take it over"
	if got := messageOf(res, "Deployment.apps/"+ns+"/web"); got != want {
		t.Fatalf("message:\n got %q\nwant %q", got, want)
	}
	after := live(t, c, web)
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatalf("the refused Deployment was written: resourceVersion %s -> %s", before.GetResourceVersion(), after.GetResourceVersion())
	}
	if diff := cmp.Diff(refs(other), res.Inventory); diff != "" {
		t.Fatalf("a refused object must not enter the inventory (-want +got):\n%s", diff)
	}
}

func TestApplyOverwriteTakesOverExistingUnmanagedObject(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("overwrite")
	mustApply(t, m, []*unstructured.Unstructured{namespace(t, ns)}, nil)
	createUnmanaged(t, c, deployment(t, ns, "web", "theirs:1"))

	web := managed(deployment(t, ns, "web", "ours:2"), "overwrite")
	res := mustApply(t, m, []*unstructured.Unstructured{web}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionConfigured})
	after := live(t, c, web)
	containers, _, _ := unstructured.NestedSlice(after.Object, "spec", "template", "spec", "containers")
	if got := containers[0].(map[string]any)["image"]; got != "ours:2" {
		t.Fatalf("image = %v, want ours:2 (the conflicting field must be taken)", got)
	}
	if after.GetLabels()[workv1alpha1.LabelManaged] != "true" {
		t.Fatalf("labels = %v: the taken-over object must carry the managed label", after.GetLabels())
	}
	assertFieldManager(t, after, "propagit")
	if diff := cmp.Diff(refs(web), res.Inventory); diff != "" {
		t.Fatalf("inventory (-want +got):\n%s", diff)
	}

	// It is propagit's to update, but propagit did not create it: removing
	// it from desired releases it instead of deleting it (issue #25).
	res = mustApply(t, m, nil, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionReleased})
	if live(t, c, web) == nil {
		t.Fatal("the taken-over Deployment was deleted")
	}
}

func TestApplyUpdatesExistingManagedObjectNotInInventory(t *testing.T) {
	// Karmada §10.2: an object carrying the managed label is updated
	// whatever the conflict setting (e.g. the inventory was lost).
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("relabel")
	cm := configMap(t, ns, "conf", "one")
	mustApply(t, m, []*unstructured.Unstructured{cm}, nil)

	res := mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "two")}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionConfigured})
	if got, _, _ := unstructured.NestedString(live(t, c, cm).Object, "data", "key"); got != "two" {
		t.Fatalf("data.key = %q, want two", got)
	}
}

func TestApplyAbortRefusesInventoryObjectThatLostManagedLabel(t *testing.T) {
	// The object is still desired and in the inventory, but someone took it
	// (dropped the label) and changed it: with abort propagit does not take
	// it back. It stays in the inventory (propagit created it), and since
	// it lacks the label it will never be pruned.
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("retake")
	cm := configMap(t, ns, "conf", "one")
	res := mustApply(t, m, []*unstructured.Unstructured{cm}, nil)
	l := live(t, c, cm)
	l.SetLabels(map[string]string{"owner": "someone"})
	if err := c.Update(t.Context(), l, client.FieldOwner("someone")); err != nil {
		t.Fatalf("update: %v", err)
	}

	res = mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "two")}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionFailed})
	if msg := messageOf(res, "ConfigMap/"+ns+"/conf"); !strings.Contains(msg, "propagit did not create it") {
		t.Fatalf("message = %q", msg)
	}
	if got, _, _ := unstructured.NestedString(live(t, c, cm).Object, "data", "key"); got != "one" {
		t.Fatalf("data.key = %q: the refused object was changed", got)
	}
	if diff := cmp.Diff(refs(cm), res.Inventory); diff != "" {
		t.Fatalf("inventory (-want +got):\n%s", diff)
	}
}

package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestApplyCreatesThenUnchangedThenConfigured(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("lifecycle")
	cm, dep, svc := configMap(t, ns, "conf", "one"), deployment(t, ns, "web", "nginx:1"), service(t, ns, "web")

	res := mustApply(t, m, []*unstructured.Unstructured{cm, dep, svc}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"ConfigMap/" + ns + "/conf": workv1alpha1.ActionCreated, "Deployment.apps/" + ns + "/web": workv1alpha1.ActionCreated, "Service/" + ns + "/web": workv1alpha1.ActionCreated,
	})
	if diff := cmp.Diff(refs(cm, dep, svc), res.Inventory); diff != "" {
		t.Fatalf("inventory (-want +got):\n%s", diff)
	}
	if res.Failed != 0 || res.String() != "3 created" {
		t.Fatalf("Failed = %d, String = %q", res.Failed, res.String())
	}
	rv := live(t, c, cm).GetResourceVersion()

	res = mustApply(t, m, []*unstructured.Unstructured{cm, dep, svc}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"ConfigMap/" + ns + "/conf": workv1alpha1.ActionUnchanged, "Deployment.apps/" + ns + "/web": workv1alpha1.ActionUnchanged, "Service/" + ns + "/web": workv1alpha1.ActionUnchanged,
	})
	if got := live(t, c, cm).GetResourceVersion(); got != rv {
		t.Fatalf("an unchanged re-apply wrote the ConfigMap: resourceVersion %s -> %s", rv, got)
	}

	cm2 := configMap(t, ns, "conf", "two")
	res = mustApply(t, m, []*unstructured.Unstructured{cm2, dep, svc}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"ConfigMap/" + ns + "/conf": workv1alpha1.ActionConfigured, "Deployment.apps/" + ns + "/web": workv1alpha1.ActionUnchanged, "Service/" + ns + "/web": workv1alpha1.ActionUnchanged,
	})
	if got, _, _ := unstructured.NestedString(live(t, c, cm).Object, "data", "key"); got != "two" {
		t.Fatalf("data.key = %q after the change, want two", got)
	}
	assertFieldManager(t, live(t, c, cm), "propagit")
}

func TestApplyPrunesObjectRemovedFromDesired(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("prune")
	keep, gone := configMap(t, ns, "keep", "1"), deployment(t, ns, "gone", "nginx:1")
	res := mustApply(t, m, []*unstructured.Unstructured{keep, gone}, nil)

	res = mustApply(t, m, []*unstructured.Unstructured{keep}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/keep": workv1alpha1.ActionUnchanged, "Deployment.apps/" + ns + "/gone": workv1alpha1.ActionPruned})
	if diff := cmp.Diff(refs(keep), res.Inventory); diff != "" {
		t.Fatalf("inventory (-want +got):\n%s", diff)
	}
	if got := live(t, c, gone); got != nil && got.GetDeletionTimestamp() == nil {
		t.Fatalf("the pruned Deployment is still there and not being deleted")
	}
}

func TestApplyDoesNotPruneObjectThatLostManagedLabel(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("taken")
	keep, taken := configMap(t, ns, "keep", "1"), configMap(t, ns, "taken", "1")
	res := mustApply(t, m, []*unstructured.Unstructured{keep, taken}, nil)

	// Someone else takes the object over: they drop propagit's label.
	l := live(t, c, taken)
	labels := l.GetLabels()
	delete(labels, workv1alpha1.LabelManaged)
	l.SetLabels(labels)
	if err := c.Update(t.Context(), l, client.FieldOwner("someone")); err != nil {
		t.Fatalf("update: %v", err)
	}

	res = mustApply(t, m, []*unstructured.Unstructured{keep}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/keep": workv1alpha1.ActionUnchanged, "ConfigMap/" + ns + "/taken": workv1alpha1.ActionSkipped})
	if msg := messageOf(res, "ConfigMap/"+ns+"/taken"); !strings.Contains(msg, "no longer carries propagit.io/managed=true") {
		t.Fatalf("message = %q", msg)
	}
	if live(t, c, taken) == nil {
		t.Fatalf("an object that lost the managed label was deleted")
	}
	if diff := cmp.Diff(refs(keep), res.Inventory); diff != "" {
		t.Fatalf("an object propagit no longer owns must leave the inventory (-want +got):\n%s", diff)
	}
}

func TestApplyLeavesUnrelatedObjectOfSameKindAlone(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("unrelated")
	ours := configMap(t, ns, "ours", "1")
	res := mustApply(t, m, []*unstructured.Unstructured{ours}, nil)
	theirs := obj(t, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs", "namespace": "`+ns+`"}, "data": {"k": "v"}}`)
	if err := c.Create(t.Context(), theirs); err != nil {
		t.Fatalf("create: %v", err)
	}
	rv := live(t, c, theirs).GetResourceVersion()

	res = mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "ours", "2")}, res.Inventory)
	res = mustApply(t, m, nil, res.Inventory) // prunes ours
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/ours": workv1alpha1.ActionPruned})
	if got := live(t, c, theirs); got == nil || got.GetResourceVersion() != rv {
		t.Fatalf("the unrelated ConfigMap was changed or deleted: %v", got)
	}
	if len(res.Inventory) != 0 {
		t.Fatalf("inventory = %v, want empty", res.Inventory)
	}
}

func TestApplyCreatesMissingNamespaceWithoutManagedLabel(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("missing")
	cm := configMap(t, ns, "conf", "1")
	res := mustApply(t, m, []*unstructured.Unstructured{cm}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionCreated})
	if diff := cmp.Diff([]string{ns}, res.Namespaces); diff != "" {
		t.Fatalf("created namespaces (-want +got):\n%s", diff)
	}
	got := liveGVK(t, c, namespaceGVK, "", ns)
	if got == nil || got.GetLabels()[workv1alpha1.LabelManaged] != "" {
		t.Fatalf("namespace %s: want it created without %s, got %v", ns, workv1alpha1.LabelManaged, got)
	}

	res = mustApply(t, m, nil, res.Inventory)
	if liveGVK(t, c, namespaceGVK, "", ns) == nil || len(res.Namespaces) != 0 {
		t.Fatalf("the created namespace must outlive its objects (never pruned)")
	}
}

func TestApplyAppliesDesiredNamespaceFirst(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("desiredns")
	// The namespace comes last in desired; staging applies it first.
	res := mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "1"), namespace(t, ns)}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionCreated, "Namespace/" + ns: workv1alpha1.ActionCreated})
	if len(res.Namespaces) != 0 {
		t.Fatalf("a desired namespace must be applied, not created bare: %v", res.Namespaces)
	}
	if got := liveGVK(t, c, namespaceGVK, "", ns); got.GetLabels()[workv1alpha1.LabelManaged] != "true" {
		t.Fatalf("the desired namespace must carry the managed label: %v", got.GetLabels())
	}
}

func TestApplyStopsAtContextEndAndKeepsInventory(t *testing.T) {
	m := newTestManager(t)
	ns := uniqueNS("ctx")
	first := configMap(t, ns, "first", "1")
	res := mustApply(t, m, []*unstructured.Unstructured{first}, nil)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := m.Apply(ctx, []*unstructured.Unstructured{configMap(t, ns, "second", "1")}, res.Inventory)
	if err == nil {
		t.Fatalf("Apply with a cancelled context: want an error")
	}
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/second": workv1alpha1.ActionFailed, "ConfigMap/" + ns + "/first": workv1alpha1.ActionFailed})
	if diff := cmp.Diff(refs(first), res.Inventory); diff != "" {
		t.Fatalf("an interrupted prune must keep the entry (-want +got):\n%s", diff)
	}
}

// assertFieldManager fails unless manager owns fields of u through Apply.
func assertFieldManager(t *testing.T, u *unstructured.Unstructured, manager string) {
	t.Helper()
	for _, f := range u.GetManagedFields() {
		if f.Manager == manager && f.Operation == "Apply" {
			return
		}
	}
	t.Fatalf("%s: no Apply entry of field manager %q in %v", fmtRef(workv1alpha1.RefOf(u)), manager, u.GetManagedFields())
}

func TestApplyStampsManagedLabelWhenMissing(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("unlabelled")
	cm := configMap(t, ns, "conf", "1")
	cm.SetLabels(nil)
	res := mustApply(t, m, []*unstructured.Unstructured{cm}, nil)
	if got := live(t, c, cm).GetLabels()[workv1alpha1.LabelManaged]; got != "true" {
		t.Fatalf("%s = %q on the member, want true", workv1alpha1.LabelManaged, got)
	}
	if cm.GetLabels() != nil {
		t.Fatalf("Apply must not change the desired objects it is given: labels %v", cm.GetLabels())
	}
	res = mustApply(t, m, nil, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionPruned})
}

package apply

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// widgetCRD returns a namespaced CRD of kind Widget in group g.
func widgetCRD(t *testing.T, g string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`, g)), "abort")
}

func TestApplyCRDAndCustomResourceInOneCall(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("crd")
	g := ns + ".test.propagit.io"
	crd := widgetCRD(t, g)
	cr := managed(obj(t, fmt.Sprintf(`
apiVersion: %s/v1
kind: Widget
metadata: {name: w, namespace: %s}
spec: {size: 3}
`, g, ns)), "abort")

	// The custom resource comes first in desired; staging reorders.
	res := mustApply(t, m, []*unstructured.Unstructured{cr, crd}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"CustomResourceDefinition.apiextensions.k8s.io/widgets." + g: workv1alpha1.ActionCreated, "Widget." + g + "/" + ns + "/w": workv1alpha1.ActionCreated,
	})
	if got, _, _ := unstructured.NestedInt64(live(t, c, cr).Object, "spec", "size"); got != 3 {
		t.Fatalf("spec.size = %d, want 3", got)
	}

	res = mustApply(t, m, []*unstructured.Unstructured{cr, crd}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"CustomResourceDefinition.apiextensions.k8s.io/widgets." + g: workv1alpha1.ActionUnchanged, "Widget." + g + "/" + ns + "/w": workv1alpha1.ActionUnchanged,
	})

	// Pruning both in one call deletes the custom resource, then the CRD.
	res = mustApply(t, m, nil, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{
		"CustomResourceDefinition.apiextensions.k8s.io/widgets." + g: workv1alpha1.ActionPruned, "Widget." + g + "/" + ns + "/w": workv1alpha1.ActionPruned,
	})
	if len(res.Inventory) != 0 {
		t.Fatalf("inventory = %v, want empty", res.Inventory)
	}
}

func TestApplyInvalidObjectFailsAlone(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("invalid")
	bad := deployment(t, ns, "bad", "nginx:1")
	if err := unstructured.SetNestedField(bad.Object, int64(-1), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	nameless := configMap(t, ns, "", "1")
	good, svc := configMap(t, ns, "good", "1"), service(t, ns, "web")
	dup := configMap(t, ns, "good", "again")

	res := mustApply(t, m, []*unstructured.Unstructured{bad, good, svc, nameless, dup}, nil)
	if res.Failed != 3 {
		t.Fatalf("Failed = %d, want 3 (invalid, nameless, duplicate): %+v", res.Failed, res.Objects)
	}
	if got := actions(res)["Deployment.apps/"+ns+"/bad"]; got != workv1alpha1.ActionFailed {
		t.Fatalf("invalid Deployment: action %q", got)
	}
	if msg := messageOf(res, "Deployment.apps/"+ns+"/bad"); !strings.HasPrefix(msg, "Deployment.apps/"+ns+"/bad apply failed (Invalid): ") {
		t.Fatalf("invalid Deployment: message %q", msg)
	}
	if live(t, c, good) == nil || live(t, c, svc) == nil {
		t.Fatalf("the valid objects must be applied despite the invalid one")
	}
	if got, _, _ := unstructured.NestedString(live(t, c, good).Object, "data", "key"); got != "1" {
		t.Fatalf("the first copy of a duplicated object must win, got data.key %q", got)
	}
	if diff := cmp.Diff(refs(good, svc), res.Inventory); diff != "" {
		t.Fatalf("inventory (-want +got):\n%s", diff)
	}
}

func TestApplyKeepsFailedOwnedObjectInInventory(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("immutable")
	dep := deployment(t, ns, "web", "nginx:1")
	res := mustApply(t, m, []*unstructured.Unstructured{dep}, nil)

	// spec.selector is immutable: the update fails, the object stays ours.
	changed := dep.DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, map[string]any{"app": "other"}, "spec", "selector", "matchLabels"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(changed.Object, map[string]any{"app": "other"}, "spec", "template", "metadata", "labels"); err != nil {
		t.Fatal(err)
	}
	res = mustApply(t, m, []*unstructured.Unstructured{changed}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionFailed})
	if msg := messageOf(res, "Deployment.apps/"+ns+"/web"); !strings.Contains(msg, "immutable") {
		t.Fatalf("message = %q, want the immutable-field error", msg)
	}
	if diff := cmp.Diff(refs(dep), res.Inventory); diff != "" {
		t.Fatalf("a failed update must keep the object in the inventory (-want +got):\n%s", diff)
	}

	res = mustApply(t, m, nil, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionPruned})
	if got := live(t, c, dep); got != nil && got.GetDeletionTimestamp() == nil {
		t.Fatalf("the Deployment was not pruned")
	}
}

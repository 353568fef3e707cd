package apply

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestApplyCorrectsDriftOnOwnedFields(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("drift")
	cm := configMap(t, ns, "conf", "ours")
	res := mustApply(t, m, []*unstructured.Unstructured{cm}, nil)

	l := live(t, c, cm)
	if err := unstructured.SetNestedField(l.Object, "theirs", "data", "key"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(t.Context(), l, client.FieldOwner("someone")); err != nil {
		t.Fatalf("update: %v", err)
	}
	res = mustApply(t, m, []*unstructured.Unstructured{cm}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionConfigured})
	if got, _, _ := unstructured.NestedString(live(t, c, cm).Object, "data", "key"); got != "ours" {
		t.Fatalf("data.key = %q, want the drift corrected to ours", got)
	}
}

func TestApplyRemovesFieldDroppedFromDesired(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("dropped")
	cm := configMap(t, ns, "conf", "1")
	if err := unstructured.SetNestedField(cm.Object, "x", "data", "extra"); err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, m, []*unstructured.Unstructured{cm}, nil)

	res = mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "1")}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/conf": workv1alpha1.ActionConfigured})
	if _, found, _ := unstructured.NestedString(live(t, c, cm).Object, "data", "extra"); found {
		t.Fatalf("data.extra is still on the member after it left the desired object")
	}
}

func TestApplyLeavesFieldsOfOthersAndNormalisedValuesUnchanged(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("normalised")
	dep := deployment(t, ns, "web", "nginx:1")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.5"}}
	if err := unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, m, []*unstructured.Unstructured{dep}, nil)

	// Someone adds a label propagit does not set.
	l := live(t, c, dep)
	labels := l.GetLabels()
	labels["team"] = "web"
	l.SetLabels(labels)
	if err := c.Update(t.Context(), l, client.FieldOwner("someone")); err != nil {
		t.Fatalf("update: %v", err)
	}
	rv := live(t, c, dep).GetResourceVersion()

	// "0.5" is stored as "500m": the fast check sees a difference, the
	// dry-run shows there is none.
	res = mustApply(t, m, []*unstructured.Unstructured{dep}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionUnchanged})
	after := live(t, c, dep)
	if after.GetResourceVersion() != rv || after.GetLabels()["team"] != "web" {
		t.Fatalf("an unchanged re-apply wrote the object or dropped the label of someone else: rv %s -> %s, labels %v",
			rv, after.GetResourceVersion(), after.GetLabels())
	}
}

// editImage changes the image of the live Deployment as `kubectl edit`
// would: an Update by another field manager.
func editImage(t *testing.T, c client.Client, dep *unstructured.Unstructured, image, manager string) {
	t.Helper()
	l := live(t, c, dep)
	containers, _, _ := unstructured.NestedSlice(l.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = image
	if err := unstructured.SetNestedSlice(l.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(t.Context(), l, client.FieldOwner(manager)); err != nil {
		t.Fatalf("update: %v", err)
	}
}

func liveImage(t *testing.T, c client.Client, dep *unstructured.Unstructured) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(live(t, c, dep).Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)["image"].(string)
}

func mustCheck(t *testing.T, m *Manager, desired []*unstructured.Unstructured, inv []workv1alpha1.ObjectRef) *Result {
	t.Helper()
	res, err := m.Check(t.Context(), desired, inv)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return res
}

func TestCheckCorrectsDriftAndNamesFieldAndManager(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	dep := deployment(t, uniqueNS("check"), "web", "nginx:1")
	res := mustApply(t, m, []*unstructured.Unstructured{dep}, nil)

	editImage(t, c, dep, "nginx:hacked", "kubectl-edit")
	res = mustCheck(t, m, []*unstructured.Unstructured{dep}, res.Inventory)
	if len(res.Drift) != 1 {
		t.Fatalf("drift = %+v, want one record", res.Drift)
	}
	d := res.Drift[0]
	want := "spec.template.spec.containers[name=main].image"
	if !slices.Equal(d.Fields, []string{want}) || d.Manager != "kubectl-edit" || !d.Corrected || d.Deleted {
		t.Fatalf("drift = %+v, want field %s changed by kubectl-edit, corrected", d, want)
	}
	if got := liveImage(t, c, dep); got != "nginx:1" {
		t.Fatalf("image = %q after the check, want it put back to nginx:1", got)
	}
	res = mustCheck(t, m, []*unstructured.Unstructured{dep}, res.Inventory)
	if len(res.Drift) != 0 || res.Count(workv1alpha1.ActionUnchanged) != 1 {
		t.Fatalf("a second check found %+v (actions %v), want nothing", res.Drift, actions(res))
	}
}

func TestCheckWarnReportsWithoutCorrecting(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("warn")
	dep := deployment(t, ns, "web", "nginx:1")
	cm := configMap(t, ns, "conf", "ours")
	for _, o := range []*unstructured.Unstructured{dep, cm} {
		ann := o.GetAnnotations()
		ann[workv1alpha1.AnnotationDrift] = workv1alpha1.DriftModeWarn
		o.SetAnnotations(ann)
	}
	desired := []*unstructured.Unstructured{dep, cm}
	res := mustApply(t, m, desired, nil)

	editImage(t, c, dep, "nginx:hacked", "kubectl-edit")
	if err := c.Delete(t.Context(), live(t, c, cm)); err != nil {
		t.Fatal(err)
	}
	res = mustCheck(t, m, desired, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"Deployment.apps/" + ns + "/web": workv1alpha1.ActionDrifted, "ConfigMap/" + ns + "/conf": workv1alpha1.ActionDrifted})
	if len(res.Drift) != 2 || res.Drift[0].Corrected || res.Drift[1].Corrected || !res.Drift[0].Deleted {
		t.Fatalf("drift = %+v, want the deleted ConfigMap and the edited Deployment, neither corrected", res.Drift)
	}
	if got := liveImage(t, c, dep); got != "nginx:hacked" {
		t.Fatalf("image = %q, want the edit left alone in the warn mode", got)
	}
	if len(res.Inventory) != 2 {
		t.Fatalf("inventory = %v, want both objects kept", res.Inventory)
	}
}

func TestCheckIgnoreNeverLooks(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	dep := deployment(t, uniqueNS("ignore"), "web", "nginx:1")
	ann := dep.GetAnnotations()
	ann[workv1alpha1.AnnotationDrift] = workv1alpha1.DriftModeIgnore
	dep.SetAnnotations(ann)
	res := mustApply(t, m, []*unstructured.Unstructured{dep}, nil)
	editImage(t, c, dep, "nginx:hacked", "kubectl-edit")
	res = mustCheck(t, m, []*unstructured.Unstructured{dep}, res.Inventory)
	if len(res.Drift) != 0 || liveImage(t, c, dep) != "nginx:hacked" {
		t.Fatalf("drift %+v, image %q: want nothing seen and nothing changed", res.Drift, liveImage(t, c, dep))
	}
}

// TestScaledReplicasAreNotDrift scales a Deployment through the scale
// subresource, as an HPA does: neither a check nor the apply of a new
// revision puts the replicas back, and no drift is reported.
func TestScaledReplicasAreNotDrift(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	dep := deployment(t, uniqueNS("hpa"), "web", "nginx:1")
	res := mustApply(t, m, []*unstructured.Unstructured{dep}, nil)

	typed := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dep.GetNamespace(), Name: dep.GetName()}}
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(t.Context(), typed, scale); err != nil {
		t.Fatalf("get scale: %v", err)
	}
	scale.Spec.Replicas = 4
	if err := c.SubResource("scale").Update(t.Context(), typed, client.WithSubResourceBody(scale),
		client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	replicas := func() int64 {
		n, _, _ := unstructured.NestedInt64(live(t, c, dep).Object, "spec", "replicas")
		return n
	}
	res = mustCheck(t, m, []*unstructured.Unstructured{dep}, res.Inventory)
	if len(res.Drift) != 0 || replicas() != 4 {
		t.Fatalf("after a check: drift %+v, replicas %d; want no drift and the scaler's 4 kept", res.Drift, replicas())
	}
	res = mustApply(t, m, []*unstructured.Unstructured{deployment(t, dep.GetNamespace(), "web", "nginx:2")}, res.Inventory)
	if res.Failed != 0 || replicas() != 4 || liveImage(t, c, dep) != "nginx:2" {
		t.Fatalf("after a new revision: actions %v, replicas %d, image %s; want nginx:2 applied and 4 replicas kept",
			actions(res), replicas(), liveImage(t, c, dep))
	}
}

func TestApplyChangesTouchesOnlyTheChange(t *testing.T) {
	var requests atomic.Int64
	m, err := NewForConfig(countedConfig(&requests), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := plainClient(t)
	ns := uniqueNS("changes")
	var objs []*unstructured.Unstructured
	for i := range 10 {
		objs = append(objs, configMap(t, ns, fmt.Sprintf("c%d", i), "1"))
	}
	res := mustApply(t, m, objs, nil)
	rv := live(t, c, objs[5]).GetResourceVersion()

	changed := configMap(t, ns, "c3", "2")
	requests.Store(0)
	res2, err := m.ApplyChanges(t.Context(), []*unstructured.Unstructured{changed}, refs(objs[9]), res.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	assertActions(t, res2, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/c3": workv1alpha1.ActionConfigured, "ConfigMap/" + ns + "/c9": workv1alpha1.ActionPruned})
	if n := requests.Load(); n > 5 { // namespace GET, GET + apply of c3, GET + DELETE of c9
		t.Errorf("one change and one removal took %d requests, want at most 5", n)
	}
	if len(res2.Inventory) != 9 {
		t.Errorf("inventory has %d entries, want the 9 objects still desired", len(res2.Inventory))
	}
	if live(t, c, objs[5]).GetResourceVersion() != rv {
		t.Errorf("an unchanged object was written")
	}
}

package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	assertActions(t, res, map[string]string{"ConfigMap/" + ns + "/conf": ActionConfigured})
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
	assertActions(t, res, map[string]string{"ConfigMap/" + ns + "/conf": ActionConfigured})
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
	assertActions(t, res, map[string]string{"Deployment/" + ns + "/web": ActionUnchanged})
	after := live(t, c, dep)
	if after.GetResourceVersion() != rv || after.GetLabels()["team"] != "web" {
		t.Fatalf("an unchanged re-apply wrote the object or dropped the label of someone else: rv %s -> %s, labels %v",
			rv, after.GetResourceVersion(), after.GetLabels())
	}
}

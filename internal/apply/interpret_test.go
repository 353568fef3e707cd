package apply

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// gadgetInterpreter scripts health (status.ready) and retention (the
// member's spec.paused) of Gadgets in group g.
func gadgetInterpreter(t *testing.T, g string) *interpret.Interpreter {
	t.Helper()
	health, err := interpret.Compile("gadget", interpret.HealthInterpretation,
		"function InterpretHealth(o)\n  return o.status ~= nil and o.status.ready == true\nend", "ric.yaml", 10)
	if err != nil {
		t.Fatal(err)
	}
	retain, err := interpret.Compile("gadget", interpret.Retention,
		"function Retain(d, o)\n  if o.spec.paused ~= nil then d.spec.paused = o.spec.paused end\n  return d\nend", "ric.yaml", 20)
	if err != nil {
		t.Fatal(err)
	}
	return interpret.New(interpret.DefaultLimits(), []interpret.Customization{
		{Name: "gadget", APIVersion: g + "/v1", Kind: "Gadget", Scripts: []*interpret.Script{health, retain}}})
}

func gadgetCRD(t *testing.T, g string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, g)), "abort")
}

func gadget(t *testing.T, g, ns string, ready bool) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: %s/v1
kind: Gadget
metadata: {name: gd, namespace: %s}
spec: {size: 1, paused: false}
status: {ready: %t}
`, g, ns, ready)), "abort")
}

// TestInterpretHealthJudgesAScriptedKind: the customization's InterpretHealth,
// not kstatus, says whether a Gadget is healthy.
func TestInterpretHealthJudgesAScriptedKind(t *testing.T) {
	m := newTestManager(t)
	ns := uniqueNS("interp")
	g := ns + ".test.propagit.io"
	m.Interpret(gadgetInterpreter(t, g))
	res := mustApply(t, m, []*unstructured.Unstructured{gadgetCRD(t, g), gadget(t, g, ns, false)}, nil)
	health := func() workv1alpha1.ObjectResult {
		t.Helper()
		out, err := m.Health(t.Context(), res.Inventory)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Kind == "Gadget" {
				return o
			}
		}
		t.Fatal("no Gadget in the health results")
		return workv1alpha1.ObjectResult{}
	}
	if h := health(); h.Health != workv1alpha1.HealthInProgress || !strings.Contains(h.Message, "InterpretHealth") {
		t.Errorf("health = %s (%s), want InProgress from InterpretHealth", h.Health, h.Message)
	}
	res = mustApply(t, m, []*unstructured.Unstructured{gadgetCRD(t, g), gadget(t, g, ns, true)}, res.Inventory)
	if h := health(); h.Health != workv1alpha1.HealthCurrent {
		t.Errorf("health = %s (%s), want Current once status.ready is true", h.Health, h.Message)
	}
	mustApply(t, m, nil, res.Inventory)
}

// TestRetainKeepsTheMembersField: someone on the member pauses the Gadget;
// a re-apply keeps spec.paused because the Retain script says so.
func TestRetainKeepsTheMembersField(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("retain")
	g := ns + ".test.propagit.io"
	m.Interpret(gadgetInterpreter(t, g))
	desired := []*unstructured.Unstructured{gadgetCRD(t, g), gadget(t, g, ns, true)}
	res := mustApply(t, m, desired, nil)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`))
	if err := c.Patch(t.Context(), live(t, c, desired[1]), patch); err != nil {
		t.Fatal(err)
	}
	res = mustApply(t, m, []*unstructured.Unstructured{gadgetCRD(t, g), gadget(t, g, ns, true)}, res.Inventory)
	if a := actions(res)["Gadget."+g+"/"+ns+"/gd"]; a != workv1alpha1.ActionUnchanged {
		t.Errorf("action = %s (%s), want Unchanged: the retained field is not drift", a, messageOf(res, "Gadget."+g+"/"+ns+"/gd"))
	}
	if p, _, _ := unstructured.NestedBool(live(t, c, desired[1]).Object, "spec", "paused"); !p {
		t.Error("spec.paused was reset to false: the Retain script was not applied")
	}
	mustApply(t, m, nil, res.Inventory)
}

package deliver

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

func workOf(t *testing.T, manifests ...string) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{}
	for _, m := range manifests {
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: []byte(m)})
	}
	return w
}

func cm(name, value string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns"},"data":{"k":%q}}`, name, value)
}

func ref(name string) workv1alpha1.ObjectRef {
	return workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "ns", Name: name}, Version: "v1"}
}

func TestChangesListsOnlyWhatDiffers(t *testing.T) {
	prev := workOf(t, cm("a", "1"), cm("b", "1"), cm("c", "1"))
	next := workOf(t, cm("a", "1"), cm("b", "2"), cm("d", "1"))
	var m decodeMemo
	if _, _, err := m.decode(prev, nil); err != nil {
		t.Fatal(err)
	}
	changed, refs, err := m.decode(next, prev)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range changed {
		names = append(names, o.GetName())
	}
	if !slices.Equal(names, []string{"b", "d"}) {
		t.Errorf("changed = %v, want [b d]", names)
	}
	if !slices.Equal(refs, []workv1alpha1.ObjectRef{ref("a"), ref("b"), ref("d")}) {
		t.Errorf("refs = %v, want a, b and d in order", refs)
	}
	// The inventory also holds e, a prune that failed before: it is retried.
	gone := removed(refs, []workv1alpha1.ObjectRef{ref("a"), ref("b"), ref("c"), ref("e")})
	if !slices.Equal(gone, []workv1alpha1.ObjectRef{ref("c"), ref("e")}) {
		t.Errorf("removed = %v, want c and e", gone)
	}
}

// TestDecodeMemoDecodesOnlyWhatChanged: a manifest byte-identical to the
// one on the member is not decoded again (its reference comes from the
// memo), and without a previous Work every object is returned.
func TestDecodeMemoDecodesOnlyWhatChanged(t *testing.T) {
	prev := workOf(t, cm("a", "1"), cm("b", "1"))
	var m decodeMemo
	all, _, err := m.decode(prev, nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("decode without a previous Work: %d objects, %v; want 2", len(all), err)
	}
	// A memo entry that is not what the bytes decode to shows whether the
	// bytes were decoded again.
	m.refs[0] = ref("from-memo") // a
	next := workOf(t, cm("a", "1"), cm("b", "2"))
	_, refs, err := m.decode(next, prev)
	if err != nil {
		t.Fatal(err)
	}
	if refs[0] != ref("from-memo") {
		t.Errorf("the unchanged manifest was decoded again: ref %v", refs[0])
	}
	// A manifest added in front moves every other one: they are found by
	// their bytes, not their position.
	moved := workOf(t, cm("0", "1"), cm("a", "1"), cm("b", "2"))
	changed, refs, err := m.decode(moved, next)
	if err != nil || len(changed) != 1 || changed[0].GetName() != "0" || refs[1] != ref("from-memo") {
		t.Errorf("after a manifest was added in front: changed %d, refs %v, %v; want only 0 decoded and a from the memo", len(changed), refs, err)
	}
	// Not on the member (no previous Work): decoded, whatever the memo says.
	all, refs, err = m.decode(next, nil)
	if err != nil || len(all) != 2 || refs[0] != ref("a") {
		t.Errorf("decode without a previous Work: %d objects, refs %v, %v; want 2 and a fresh ref a", len(all), refs, err)
	}
	if _, _, err := m.decode(workOf(t, `{"kind":`), nil); err == nil {
		t.Error("a manifest that is not JSON decoded without error")
	}
}

func TestMergeResultsKeepsUntouchedHealth(t *testing.T) {
	prev := []workv1alpha1.ObjectResult{
		{ObjectRef: ref("a"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("b"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("c"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
	}
	res := &apply.Result{
		Objects: []workv1alpha1.ObjectResult{
			{ObjectRef: ref("b"), Action: workv1alpha1.ActionConfigured},
			{ObjectRef: ref("c"), Action: workv1alpha1.ActionPruned},
			{ObjectRef: ref("d"), Action: workv1alpha1.ActionFailed, Message: "denied"},
		},
		Inventory: []workv1alpha1.ObjectRef{ref("a"), ref("b")},
	}
	got := mergeResults(prev, res)
	want := []workv1alpha1.ObjectResult{
		{ObjectRef: ref("a"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("b"), Action: workv1alpha1.ActionConfigured},
		{ObjectRef: ref("d"), Action: workv1alpha1.ActionFailed, Message: "denied"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("merged:\n got %+v\nwant %+v", got, want)
	}
}

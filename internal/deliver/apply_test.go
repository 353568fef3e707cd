package deliver

import (
	"fmt"
	"math/rand/v2"
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

// TestManifestIndexChangedInPlace: in a list as long as the Work searched,
// a few manifests changed in place are answered "absent" without hashing
// every manifest into a map; past inPlaceMisses the map is built and a
// manifest that moved is found again. Two manifests swapped in a Work of
// the same length are decoded (and applied) again, as changed: safe, and
// rare.
func TestManifestIndexChangedInPlace(t *testing.T) {
	var raws [][]byte
	for i := range 2 * inPlaceMisses {
		raws = append(raws, []byte(cm(fmt.Sprint("c", i), "1")))
	}
	x := manifestIndex{raws: raws, aligned: true}
	if j := x.find(3, []byte(cm("c3", "2"))); j != -1 || x.byRaw != nil {
		t.Fatalf("one manifest changed in place: find = %d, map built %v; want -1 and no map", j, x.byRaw != nil)
	}
	for i := range inPlaceMisses {
		x.find(i, []byte(cm(fmt.Sprint("c", i), "3")))
	}
	if j := x.find(0, raws[5]); j != 5 || x.byRaw == nil {
		t.Errorf("past %d misses: a moved manifest found at %d (map built %v), want 5", inPlaceMisses, j, x.byRaw != nil)
	}
	if j := (&manifestIndex{raws: raws}).find(0, raws[5]); j != 5 {
		t.Errorf("a list of another length: a moved manifest found at %d, want 5", j)
	}

	prev := workOf(t, cm("a", "1"), cm("b", "1"))
	var m decodeMemo
	if _, _, err := m.decode(prev, nil); err != nil {
		t.Fatal(err)
	}
	swapped := workOf(t, cm("b", "1"), cm("a", "1"))
	objs, refs, err := m.decode(swapped, prev)
	if err != nil || len(objs) != 2 || refs[0] != ref("b") || refs[1] != ref("a") {
		t.Errorf("two manifests swapped: %d objects, refs %v, %v; want both again, refs b, a", len(objs), refs, err)
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

// TestNotCurrentMatchesTheMapRule: the side-by-side walk of sorted lists
// gives what the plain rule (a set of the Current results) gives, on
// random inventories and results — sorted, unsorted, with duplicates, with
// a key under two versions, and results outside the inventory.
func TestNotCurrentMatchesTheMapRule(t *testing.T) {
	plain := func(inv []workv1alpha1.ObjectRef, objs []workv1alpha1.ObjectResult) []workv1alpha1.ObjectRef {
		current := map[workv1alpha1.ObjectRef]bool{}
		for _, o := range objs {
			if o.Health == workv1alpha1.HealthCurrent {
				current[o.ObjectRef] = true
			}
		}
		var out []workv1alpha1.ObjectRef
		for _, r := range inv {
			if !current[r] {
				out = append(out, r)
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(7, 32))
	refAt := func() workv1alpha1.ObjectRef {
		r := ref(fmt.Sprint("o", rng.IntN(12)))
		if rng.IntN(6) == 0 {
			r.Version = "v2"
		}
		return r
	}
	healths := []workv1alpha1.Health{workv1alpha1.HealthCurrent, workv1alpha1.HealthCurrent, workv1alpha1.HealthInProgress, ""}
	byKey := func(a, b workv1alpha1.ObjectRef) int { return a.Compare(b.ObjectKey) }
	for c := range 500 {
		var inv []workv1alpha1.ObjectRef
		var objs []workv1alpha1.ObjectResult
		for range rng.IntN(10) {
			inv = append(inv, refAt())
		}
		for range rng.IntN(10) {
			objs = append(objs, workv1alpha1.ObjectResult{ObjectRef: refAt(), Health: healths[rng.IntN(len(healths))]})
		}
		if c%4 != 0 { // mostly sorted, as syncs keep them
			slices.SortStableFunc(inv, byKey)
			slices.SortStableFunc(objs, func(a, b workv1alpha1.ObjectResult) int { return byKey(a.ObjectRef, b.ObjectRef) })
		}
		if got, want := notCurrent(inv, objs), plain(inv, objs); !slices.Equal(got, want) {
			t.Fatalf("case %d: inventory %v, results %v: got %v, want %v", c, inv, objs, got, want)
		}
	}
}

// TestUnionAndRemovedMatchThePlainRule: union and removed, walking sorted
// lists side by side, give what the plain rules (a set of refs, a set of
// keys) give, on random lists — sorted, unsorted, with duplicates and a
// key under two versions.
func TestUnionAndRemovedMatchThePlainRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	refAt := func() workv1alpha1.ObjectRef {
		r := ref(fmt.Sprint("o", rng.IntN(12)))
		if rng.IntN(6) == 0 {
			r.Version = "v2"
		}
		return r
	}
	list := func(sorted bool) []workv1alpha1.ObjectRef {
		var out []workv1alpha1.ObjectRef
		for range rng.IntN(10) {
			out = append(out, refAt())
		}
		if sorted {
			slices.SortStableFunc(out, refOrder)
		}
		return out
	}
	for c := range 500 {
		inv, refs := list(c%4 != 0), list(c%3 != 0)
		got := union(inv, refs)
		set := map[workv1alpha1.ObjectRef]bool{}
		for _, r := range slices.Concat(inv, refs) {
			set[r] = true
		}
		seen := map[workv1alpha1.ObjectRef]bool{}
		for _, r := range got {
			if seen[r] || !set[r] {
				t.Fatalf("case %d: union(%v, %v) = %v: %v twice or not in either", c, inv, refs, got, r)
			}
			seen[r] = true
		}
		if len(seen) != len(set) || !slices.IsSortedFunc(got, refOrder) {
			t.Fatalf("case %d: union(%v, %v) = %v: want each of %d refs once, sorted", c, inv, refs, got, len(set))
		}

		wanted := map[workv1alpha1.ObjectKey]bool{}
		for _, r := range refs {
			wanted[r.ObjectKey] = true
		}
		var want []workv1alpha1.ObjectRef
		for _, r := range inv {
			if !wanted[r.ObjectKey] {
				want = append(want, r)
			}
		}
		if got := removed(refs, inv); !slices.Equal(got, want) {
			t.Fatalf("case %d: removed(%v, %v) = %v, want %v", c, refs, inv, got, want)
		}
	}
}

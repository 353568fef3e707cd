package apply

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestMergeInventory: the merge of a partial apply's touched entries into
// its kept ones equals the plain rule (touched wins, first kept entry of a
// key wins, all sorted), however the two overlap and whether kept arrives
// in order or not.
func TestMergeInventory(t *testing.T) {
	ref := func(name, version string) workv1alpha1.ObjectRef {
		return workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "demo", Name: name}, Version: version}
	}
	// plain is the rule written the obvious way.
	plain := func(kept []workv1alpha1.ObjectRef, touched map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef) []workv1alpha1.ObjectRef {
		inv := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef{}
		for k, r := range touched {
			inv[k] = r
		}
		sorted := slices.Clone(kept)
		slices.SortStableFunc(sorted, compareRef)
		for _, r := range sorted {
			if _, ok := inv[r.ObjectKey]; !ok {
				inv[r.ObjectKey] = r
			}
		}
		var out []workv1alpha1.ObjectRef
		for _, r := range inv {
			out = append(out, r)
		}
		slices.SortFunc(out, compareRef)
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var kept []workv1alpha1.ObjectRef
		for range rng.IntN(30) {
			kept = append(kept, ref(fmt.Sprint("cm", rng.IntN(40)), fmt.Sprint("v", rng.IntN(2))))
		}
		if i%2 == 0 {
			slices.SortFunc(kept, compareRef) // as an inventory arrives
		}
		touched := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef{}
		for range rng.IntN(8) {
			r := ref(fmt.Sprint("cm", rng.IntN(40)), "v9")
			touched[r.ObjectKey] = r
		}
		want := plain(kept, touched)
		if got := mergeInventory(kept, touched); !slices.Equal(got, want) {
			t.Fatalf("case %d: kept %v touched %v:\n got %v\nwant %v", i, kept, touched, got, want)
		}
	}
}

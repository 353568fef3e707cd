package apply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Result is the outcome of one Apply.
type Result struct {
	// Objects has one entry per desired object and per stale inventory
	// entry, sorted by namespace, kind, group and name.
	Objects []workv1alpha1.ObjectResult
	// Inventory is what propagit owns on the member now; pass it to the
	// next Apply. Sorted like Objects.
	Inventory []workv1alpha1.ObjectRef
	// Namespaces lists the namespaces created because desired objects live
	// in them (never labelled as managed, never pruned), sorted.
	Namespaces []string
	// Failed counts the Objects whose Action is Failed.
	Failed int
	// Drift lists the objects changed on the member outside propagit, in
	// the order of Objects.
	Drift []Drift
}

// Count returns how many Objects have the given action.
func (r *Result) Count(action workv1alpha1.Action) int {
	n := 0
	for _, o := range r.Objects {
		if o.Action == action {
			n++
		}
	}
	return n
}

// String summarises the result, e.g. "3 created, 2 unchanged, 1 failed".
func (r *Result) String() string {
	var parts []string
	for _, a := range []workv1alpha1.Action{workv1alpha1.ActionCreated, workv1alpha1.ActionConfigured, workv1alpha1.ActionUnchanged, workv1alpha1.ActionDrifted, workv1alpha1.ActionPruned, workv1alpha1.ActionReleased, workv1alpha1.ActionSkipped, workv1alpha1.ActionFailed} {
		if n := r.Count(a); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(string(a))))
		}
	}
	if len(parts) == 0 {
		return "no objects"
	}
	return strings.Join(parts, ", ")
}

// newResult collects the outcome of a plan. Items and prunes never started
// (ctx ended) are reported Failed with ctxErr and stay in the inventory if
// they were in it.
func newResult(p *plan, prunes []pruned, namespaces []string, ctxErr error) *Result {
	res := &Result{Namespaces: namespaces}
	inv := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef{}
	for _, it := range p.items {
		if !it.done {
			it.fail("was not applied: %v", ctxErr)
		}
		res.Objects = append(res.Objects, workv1alpha1.ObjectResult{ObjectRef: it.ref, Action: it.action, Message: it.message})
		if it.drift != nil {
			res.Drift = append(res.Drift, *it.drift)
		}
		switch {
		case it.action == workv1alpha1.ActionCreated || it.action == workv1alpha1.ActionConfigured || it.action == workv1alpha1.ActionUnchanged || it.action == workv1alpha1.ActionDrifted:
			inv[it.ref.ObjectKey] = it.ref
		case it.owned:
			if _, ok := inv[it.prev.ObjectKey]; !ok {
				inv[it.prev.ObjectKey] = it.prev
			}
		}
	}
	for _, pr := range prunes {
		if pr.action == "" {
			pr.action = workv1alpha1.ActionFailed
			pr.message = fmt.Sprintf("%s was not pruned: %v", fmtRef(pr.ref), ctxErr)
		}
		res.Objects = append(res.Objects, workv1alpha1.ObjectResult{ObjectRef: pr.ref, Action: pr.action, Message: pr.message})
		if pr.keep() {
			inv[pr.ref.ObjectKey] = pr.ref
		}
	}
	res.Inventory = mergeInventory(p.kept, inv)
	slices.SortStableFunc(res.Objects, func(a, b workv1alpha1.ObjectResult) int { return compareRef(a.ObjectRef, b.ObjectRef) })
	slices.SortStableFunc(res.Drift, func(a, b Drift) int { return compareRef(a.ObjectRef, b.ObjectRef) })
	res.Failed = res.Count(workv1alpha1.ActionFailed)
	return res
}

// mergeInventory returns the inventory after an apply: touched, what the
// apply decided for the objects it handled, plus the kept entries of keys
// it did not handle (the first of a key wins), sorted. kept is the large,
// unchanged part of a partial apply's inventory and already in order, so
// only touched is sorted and merged in: the cost follows what changed.
func mergeInventory(kept []workv1alpha1.ObjectRef, touched map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef) []workv1alpha1.ObjectRef {
	if !slices.IsSortedFunc(kept, compareRef) {
		kept = slices.Clone(kept)
		slices.SortStableFunc(kept, compareRef)
	}
	add := make([]workv1alpha1.ObjectRef, 0, len(touched))
	for _, r := range touched {
		add = append(add, r)
	}
	slices.SortFunc(add, compareRef) // keys are unique: no order to keep
	out := make([]workv1alpha1.ObjectRef, 0, len(kept)+len(add))
	i := 0
	for k, r := range kept {
		if _, ok := touched[r.ObjectKey]; ok || k > 0 && kept[k-1].ObjectKey == r.ObjectKey {
			continue
		}
		for ; i < len(add) && compareRef(add[i], r) < 0; i++ {
			out = append(out, add[i])
		}
		out = append(out, r)
	}
	return append(out, add[i:]...)
}

// compareRef orders references by key, then version: the order of a
// Work's manifests.
func compareRef(a, b workv1alpha1.ObjectRef) int {
	if c := a.Compare(b.ObjectKey); c != 0 {
		return c
	}
	return strings.Compare(a.Version, b.Version)
}

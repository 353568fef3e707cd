package apply

import (
	"fmt"
	"sort"
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
func (r *Result) Count(action string) int {
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
	for _, a := range []string{ActionCreated, ActionConfigured, ActionUnchanged, ActionDrifted, ActionPruned, ActionSkipped, ActionFailed} {
		if n := r.Count(a); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(a)))
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
	inv := map[key]workv1alpha1.ObjectRef{}
	for _, it := range p.items {
		if !it.done {
			it.fail("was not applied: %v", ctxErr)
		}
		res.Objects = append(res.Objects, workv1alpha1.ObjectResult{ObjectRef: it.ref, Action: it.action, Message: it.message})
		if it.drift != nil {
			res.Drift = append(res.Drift, *it.drift)
		}
		switch {
		case it.action == ActionCreated || it.action == ActionConfigured || it.action == ActionUnchanged || it.action == ActionDrifted:
			inv[keyOf(it.ref)] = it.ref
		case it.owned:
			if _, ok := inv[keyOf(it.prev)]; !ok {
				inv[keyOf(it.prev)] = it.prev
			}
		}
	}
	for _, pr := range prunes {
		if pr.action == "" {
			pr.action = ActionFailed
			pr.message = fmt.Sprintf("%s was not pruned: %v", fmtRef(pr.ref), ctxErr)
		}
		res.Objects = append(res.Objects, workv1alpha1.ObjectResult{ObjectRef: pr.ref, Action: pr.action, Message: pr.message})
		if pr.keep() {
			inv[keyOf(pr.ref)] = pr.ref
		}
	}
	for _, r := range p.kept {
		if _, ok := inv[keyOf(r)]; !ok {
			inv[keyOf(r)] = r
		}
	}
	for _, r := range inv {
		res.Inventory = append(res.Inventory, r)
	}
	sortResults(res.Objects)
	sort.SliceStable(res.Drift, func(i, j int) bool { return lessRef(res.Drift[i].ObjectRef, res.Drift[j].ObjectRef) })
	sortRefs(res.Inventory)
	res.Failed = res.Count(ActionFailed)
	return res
}

// lessRef orders references by namespace, kind, group, name and version,
// the order of a Work's manifests.
func lessRef(a, b workv1alpha1.ObjectRef) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Version < b.Version
}

func sortRefs(refs []workv1alpha1.ObjectRef) {
	sort.SliceStable(refs, func(i, j int) bool { return lessRef(refs[i], refs[j]) })
}

func sortResults(results []workv1alpha1.ObjectResult) {
	sort.SliceStable(results, func(i, j int) bool { return lessRef(results[i].ObjectRef, results[j].ObjectRef) })
}

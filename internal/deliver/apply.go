package deliver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
)

// apply applies w and folds the result into st; false when anything failed.
// When the Work before it is known to be on the member, only what changed
// is applied (and what left it pruned): the objects that did not change
// cost no request, and the drift watch and periodic check keep them
// honest.
func (s *Syncer) apply(ctx context.Context, mgr Writer, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) bool {
	partial := s.applied != nil && st.AppliedDigest == s.appliedDigest
	var prev *workv1alpha1.Work
	if partial {
		prev = s.applied
	}
	objs, refs, err := s.decoded.decode(w, prev)
	if err != nil {
		s.set(st, workv1alpha1.ConditionApplied, metav1.ConditionFalse, workv1alpha1.ReasonInvalidWork, err.Error())
		return false
	}
	// Record first what this apply may create: a process killed mid-apply
	// then still knows to prune it after a revert. A Work that only changes
	// objects the inventory already holds creates nothing new, and its
	// apply does not wait for a status write.
	before := len(st.Inventory)
	st.Inventory = union(st.Inventory, refs)
	if len(st.Inventory) != before {
		s.write(ctx, st)
	}
	var res *apply.Result
	if partial {
		res, err = mgr.ApplyChanges(ctx, objs, removed(refs, st.Inventory), st.Inventory)
		if res != nil {
			st.Objects = mergeResults(st.Objects, res)
		}
	} else {
		res, err = mgr.Apply(ctx, objs, st.Inventory)
		if res != nil {
			st.Objects = res.Objects
		}
	}
	if res != nil {
		st.Inventory = res.Inventory
		s.recordDrift(st, res)
	}
	s.record(res, err)
	rev := workv1alpha1.ShortRevision(w.Spec.SourceRevision)
	switch {
	case err != nil:
		s.set(st, workv1alpha1.ConditionApplied, metav1.ConditionFalse, workv1alpha1.ReasonApplyFailed, err.Error())
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonApplyFailed, err.Error())
		s.log.Error(err, "apply failed", logging.KeyRevision, rev)
		return false
	case res.Failed > 0:
		msg := fmt.Sprintf("%d of %d objects failed: %s", res.Failed, len(res.Objects), firstFailure(res))
		s.set(st, workv1alpha1.ConditionApplied, metav1.ConditionFalse, workv1alpha1.ReasonApplyFailed, msg)
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonApplyFailed, msg)
		s.log.Info("apply incomplete", logging.KeyRevision, rev, "failed", res.Failed, "first", firstFailure(res))
		return false
	}
	s.set(st, workv1alpha1.ConditionApplied, metav1.ConditionTrue, workv1alpha1.ReasonApplied, res.String())
	s.log.Info("applied", logging.KeyRevision, rev, "result", res.String())
	return true
}

// removed returns the inventory entries refs, the objects of the next
// Work, no longer hold.
func removed(refs []workv1alpha1.ObjectRef, inventory []workv1alpha1.ObjectRef) []workv1alpha1.ObjectRef {
	byKey := func(a, b workv1alpha1.ObjectRef) int { return a.Compare(b.ObjectKey) }
	if slices.IsSortedFunc(refs, byKey) && slices.IsSortedFunc(inventory, byKey) {
		// Side by side, without a map of every ref (see notCurrent).
		var out []workv1alpha1.ObjectRef
		j := 0
		for _, r := range inventory {
			for j < len(refs) && byKey(refs[j], r) < 0 {
				j++
			}
			wanted := false
			for k := j; k < len(refs) && byKey(refs[k], r) == 0; k++ {
				if refs[k].ObjectKey == r.ObjectKey {
					wanted = true
					break
				}
			}
			if !wanted {
				out = append(out, r)
			}
		}
		return out
	}
	wanted := make(map[workv1alpha1.ObjectKey]bool, len(refs))
	for _, r := range refs {
		wanted[r.ObjectKey] = true
	}
	var out []workv1alpha1.ObjectRef
	for _, r := range inventory {
		if !wanted[r.ObjectKey] {
			out = append(out, r)
		}
	}
	return out
}

// mergeResults folds the results of a partial apply into the previous
// per-object results: objects it touched take its result (and lose their
// health, to be read again), the others keep theirs while they stay in the
// inventory.
func mergeResults(prev []workv1alpha1.ObjectResult, res *apply.Result) []workv1alpha1.ObjectResult {
	touched := map[workv1alpha1.ObjectKey]bool{}
	out := make([]workv1alpha1.ObjectResult, 0, len(prev)+len(res.Objects))
	for _, o := range res.Objects {
		touched[o.ObjectKey] = true
		if o.Action != workv1alpha1.ActionPruned && o.Action != workv1alpha1.ActionSkipped && o.Action != workv1alpha1.ActionReleased {
			out = append(out, o)
		}
	}
	inInventory := map[workv1alpha1.ObjectKey]bool{}
	for _, r := range res.Inventory {
		inInventory[r.ObjectKey] = true
	}
	for _, o := range prev {
		if !touched[o.ObjectKey] && inInventory[o.ObjectKey] {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha1.ObjectResult) int { return a.Compare(b.ObjectKey) })
	return out
}

func firstFailure(res *apply.Result) string {
	for _, o := range res.Objects {
		if o.Action == workv1alpha1.ActionFailed {
			return o.Message
		}
	}
	return ""
}

// health reads kstatus for the inventory objects not known to be healthy
// (a partial apply keeps the health of the objects it did not touch) and
// sets Healthy and Ready.
func (s *Syncer) health(ctx context.Context, mgr HealthReader, st *workv1alpha1.WorkStatus, w *workv1alpha1.Work) bool {
	unknown := notCurrent(st.Inventory, st.Objects)
	results, err := mgr.Health(ctx, unknown)
	if err != nil {
		s.set(st, workv1alpha1.ConditionHealthy, metav1.ConditionUnknown, workv1alpha1.ReasonHealthUnknown, err.Error())
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonHealthUnknown, err.Error())
		return false
	}
	read := map[workv1alpha1.ObjectRef]workv1alpha1.ObjectResult{}
	for _, r := range results {
		read[r.ObjectRef] = r
	}
	waiting := 0
	for i := range st.Objects {
		r, ok := read[st.Objects[i].ObjectRef]
		if !ok {
			continue // known healthy, or not on the member (failed)
		}
		h := r.Health
		st.Objects[i].Health, st.Objects[i].Status = h, r.Status
		switch {
		case h == workv1alpha1.HealthCurrent:
			st.Objects[i].Message = ""
		case r.Message != "":
			st.Objects[i].Message = r.Message // why it is not healthy (a script's verdict, kstatus' reason)
		}
		if h == workv1alpha1.HealthNotFound {
			// Deleted on the member, or the member was rebuilt: apply again
			// instead of waiting for it to appear.
			st.AppliedDigest = ""
		}
		if h != workv1alpha1.HealthCurrent {
			waiting++
		}
	}
	if waiting > 0 {
		msg := fmt.Sprintf("%d of %d objects not healthy yet", waiting, len(st.Inventory))
		s.set(st, workv1alpha1.ConditionHealthy, metav1.ConditionFalse, workv1alpha1.ReasonProgressing, msg)
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonProgressing, msg)
		return false
	}
	msg := fmt.Sprintf("revision %s applied; %d healthy", workv1alpha1.ShortRevision(w.Spec.SourceRevision), len(st.Inventory))
	if len(st.Inventory) == 1 {
		msg += " object"
	} else {
		msg += " objects"
	}
	s.set(st, workv1alpha1.ConditionHealthy, metav1.ConditionTrue, workv1alpha1.ReasonHealthy, msg)
	s.set(st, workv1alpha1.ConditionReady, metav1.ConditionTrue, workv1alpha1.ReasonReady, msg)
	return true
}

// notCurrent returns the inventory entries whose result is not known to
// be Current. Both lists are normally sorted by object key (union and
// mergeResults keep them so): they are then walked side by side, where a
// map of a member's thousands of results would be built on every sync.
func notCurrent(inventory []workv1alpha1.ObjectRef, objects []workv1alpha1.ObjectResult) []workv1alpha1.ObjectRef {
	byKey := func(a, b workv1alpha1.ObjectRef) int { return a.Compare(b.ObjectKey) }
	if !slices.IsSortedFunc(inventory, byKey) ||
		!slices.IsSortedFunc(objects, func(a, b workv1alpha1.ObjectResult) int { return byKey(a.ObjectRef, b.ObjectRef) }) {
		current := make(map[workv1alpha1.ObjectRef]bool, len(objects))
		for _, o := range objects {
			if o.Health == workv1alpha1.HealthCurrent {
				current[o.ObjectRef] = true
			}
		}
		var out []workv1alpha1.ObjectRef
		for _, r := range inventory {
			if !current[r] {
				out = append(out, r)
			}
		}
		return out
	}
	var out []workv1alpha1.ObjectRef
	j := 0
	for _, r := range inventory {
		for j < len(objects) && byKey(objects[j].ObjectRef, r) < 0 {
			j++
		}
		found := false // among the results of r's key (one, but for another version)
		for k := j; k < len(objects) && byKey(objects[k].ObjectRef, r) == 0; k++ {
			if objects[k].ObjectRef == r && objects[k].Health == workv1alpha1.HealthCurrent {
				found = true
				break
			}
		}
		if !found {
			out = append(out, r)
		}
	}
	return out
}

// record counts one apply in the metrics.
func (s *Syncer) record(res *apply.Result, err error) {
	m := s.opts.Metrics
	if m == nil {
		return
	}
	if res != nil {
		for _, a := range []workv1alpha1.Action{workv1alpha1.ActionCreated, workv1alpha1.ActionConfigured, workv1alpha1.ActionPruned, workv1alpha1.ActionFailed} {
			m.ObjectsApplied(s.cluster, string(a), res.Count(a))
		}
	}
	if err != nil || res == nil || res.Failed > 0 {
		m.ApplyResult(s.cluster, metrics.ApplyFailure)
		return
	}
	m.ApplyResult(s.cluster, metrics.ApplySuccess)
	m.LastApplySuccess(s.cluster, s.clock.Now())
}

// union returns inventory plus refs, sorted and without duplicates.
func union(inventory, refs []workv1alpha1.ObjectRef) []workv1alpha1.ObjectRef {
	if slices.IsSortedFunc(inventory, refOrder) && slices.IsSortedFunc(refs, refOrder) {
		// Merged side by side, without a map of every ref (see notCurrent).
		out := make([]workv1alpha1.ObjectRef, 0, max(len(inventory), len(refs)))
		i, j := 0, 0
		for i < len(inventory) || j < len(refs) {
			var r workv1alpha1.ObjectRef
			if j == len(refs) || (i < len(inventory) && refOrder(inventory[i], refs[j]) <= 0) {
				r, i = inventory[i], i+1
			} else {
				r, j = refs[j], j+1
			}
			dup := false // an equal ref sorts beside it, at the end of out
			for k := len(out) - 1; k >= 0 && refOrder(out[k], r) == 0; k-- {
				if out[k] == r {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, r)
			}
		}
		return out
	}
	seen := map[workv1alpha1.ObjectRef]bool{}
	out := make([]workv1alpha1.ObjectRef, 0, len(inventory)+len(refs))
	for _, list := range [][]workv1alpha1.ObjectRef{inventory, refs} {
		for _, r := range list {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, refOrder)
	return out
}

// refOrder is the order of an inventory: by object key, then version.
func refOrder(a, b workv1alpha1.ObjectRef) int {
	return cmp.Or(a.Compare(b.ObjectKey), strings.Compare(a.Version, b.Version))
}

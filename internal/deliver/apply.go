package deliver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/metrics"
)

// apply applies w and folds the result into st; false when anything failed.
// When the Work before it is known to be on the member, only what changed
// is applied (and what left it pruned): the objects that did not change
// cost no request, and the drift watch and periodic check keep them
// honest.
func (s *Syncer) apply(ctx context.Context, mgr *apply.Manager, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) bool {
	objs, err := Objects(w)
	if err != nil {
		s.set(st, ConditionApplied, metav1.ConditionFalse, "InvalidWork", err.Error())
		return false
	}
	// Record first what this apply may create: a process killed mid-apply
	// then still knows to prune it after a revert.
	st.Inventory = union(st.Inventory, objs)
	s.write(ctx, st)
	var res *apply.Result
	if s.applied != nil && st.AppliedDigest == Digest(s.applied) {
		changed, removed := changes(s.applied, w, objs, st.Inventory)
		res, err = mgr.ApplyChanges(ctx, changed, removed, st.Inventory)
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
	rev := short(w.Spec.SourceRevision)
	switch {
	case err != nil:
		s.set(st, ConditionApplied, metav1.ConditionFalse, "ApplyFailed", err.Error())
		s.set(st, ConditionReady, metav1.ConditionFalse, "ApplyFailed", err.Error())
		s.log.Error(err, "apply failed", "revision", rev)
		return false
	case res.Failed > 0:
		msg := fmt.Sprintf("%d of %d objects failed: %s", res.Failed, len(res.Objects), firstFailure(res))
		s.set(st, ConditionApplied, metav1.ConditionFalse, "ApplyFailed", msg)
		s.set(st, ConditionReady, metav1.ConditionFalse, "ApplyFailed", msg)
		s.log.Info("apply incomplete", "revision", rev, "failed", res.Failed, "first", firstFailure(res))
		return false
	}
	s.set(st, ConditionApplied, metav1.ConditionTrue, "Applied", res.String())
	s.log.Info("applied", "revision", rev, "result", res.String())
	return true
}

// changes returns the objects of next (decoded as objs) whose manifest is
// not byte-identical in prev, and the inventory entries next no longer
// holds.
func changes(prev, next *workv1alpha1.Work, objs []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef) ([]*unstructured.Unstructured, []workv1alpha1.ObjectRef) {
	before := make(map[string]bool, len(prev.Spec.Manifests))
	for _, m := range prev.Spec.Manifests {
		before[string(m.Raw)] = true
	}
	var changed []*unstructured.Unstructured
	wanted := make(map[workv1alpha1.ObjectRef]bool, len(objs))
	for i, o := range objs {
		r := refOf(o)
		wanted[r] = true
		if next.Spec.Manifests[i].Raw == nil || !before[string(next.Spec.Manifests[i].Raw)] {
			changed = append(changed, o)
		}
	}
	var removed []workv1alpha1.ObjectRef
	for _, r := range inventory {
		v := r
		v.Version = ""
		if !wanted[v] {
			removed = append(removed, r)
		}
	}
	return changed, removed
}

// refOf is o's reference without the version: an object keeps its identity
// across API versions.
func refOf(o *unstructured.Unstructured) workv1alpha1.ObjectRef {
	gvk := o.GroupVersionKind()
	return workv1alpha1.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// mergeResults folds the results of a partial apply into the previous
// per-object results: objects it touched take its result (and lose their
// health, to be read again), the others keep theirs while they stay in the
// inventory.
func mergeResults(prev []workv1alpha1.ObjectResult, res *apply.Result) []workv1alpha1.ObjectResult {
	touched := map[workv1alpha1.ObjectRef]bool{}
	out := make([]workv1alpha1.ObjectResult, 0, len(prev)+len(res.Objects))
	for _, o := range res.Objects {
		r := o.ObjectRef
		r.Version = ""
		touched[r] = true
		if o.Action != apply.ActionPruned && o.Action != apply.ActionSkipped {
			out = append(out, o)
		}
	}
	inInventory := map[workv1alpha1.ObjectRef]bool{}
	for _, r := range res.Inventory {
		r.Version = ""
		inInventory[r] = true
	}
	for _, o := range prev {
		r := o.ObjectRef
		r.Version = ""
		if !touched[r] && inInventory[r] {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha1.ObjectResult) int { return compareRefs(a.ObjectRef, b.ObjectRef) })
	return out
}

// compareRefs orders references like a Work's manifests: namespace, kind,
// group, name.
func compareRefs(a, b workv1alpha1.ObjectRef) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Group, b.Group), strings.Compare(a.Name, b.Name))
}

func firstFailure(res *apply.Result) string {
	for _, o := range res.Objects {
		if o.Action == apply.ActionFailed {
			return o.Message
		}
	}
	return ""
}

// health reads kstatus for the inventory objects not known to be healthy
// (a partial apply keeps the health of the objects it did not touch) and
// sets Healthy and Ready.
func (s *Syncer) health(ctx context.Context, mgr *apply.Manager, st *workv1alpha1.WorkStatus, w *workv1alpha1.Work) bool {
	current := map[workv1alpha1.ObjectRef]bool{}
	for _, o := range st.Objects {
		if o.Health == apply.HealthCurrent {
			current[o.ObjectRef] = true
		}
	}
	var unknown []workv1alpha1.ObjectRef
	for _, r := range st.Inventory {
		if !current[r] {
			unknown = append(unknown, r)
		}
	}
	results, err := mgr.Health(ctx, unknown)
	if err != nil {
		s.set(st, ConditionHealthy, metav1.ConditionUnknown, "HealthUnknown", err.Error())
		s.set(st, ConditionReady, metav1.ConditionFalse, "HealthUnknown", err.Error())
		return false
	}
	health := map[workv1alpha1.ObjectRef]string{}
	for _, r := range results {
		health[r.ObjectRef] = r.Health
	}
	waiting := 0
	for i := range st.Objects {
		h, ok := health[st.Objects[i].ObjectRef]
		if !ok {
			continue // known healthy, or not on the member (failed)
		}
		st.Objects[i].Health = h
		if h == apply.HealthNotFound {
			// Deleted on the member, or the member was rebuilt: apply again
			// instead of waiting for it to appear.
			st.AppliedDigest = ""
		}
		if h != apply.HealthCurrent {
			waiting++
		}
	}
	if waiting > 0 {
		msg := fmt.Sprintf("%d of %d objects not healthy yet", waiting, len(st.Inventory))
		s.set(st, ConditionHealthy, metav1.ConditionFalse, "Progressing", msg)
		s.set(st, ConditionReady, metav1.ConditionFalse, "Progressing", msg)
		return false
	}
	msg := fmt.Sprintf("revision %s applied; %d healthy", short(w.Spec.SourceRevision), len(st.Inventory))
	if len(st.Inventory) == 1 {
		msg += " object"
	} else {
		msg += " objects"
	}
	s.set(st, ConditionHealthy, metav1.ConditionTrue, "Healthy", msg)
	s.set(st, ConditionReady, metav1.ConditionTrue, "Ready", msg)
	return true
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// record counts one apply in the metrics.
func (s *Syncer) record(res *apply.Result, err error) {
	m := s.opts.Metrics
	if m == nil {
		return
	}
	if res != nil {
		for _, a := range []string{apply.ActionCreated, apply.ActionConfigured, apply.ActionPruned, apply.ActionFailed} {
			m.ObjectsApplied(s.cluster, a, res.Count(a))
		}
	}
	if err != nil || res == nil || res.Failed > 0 {
		m.ApplyResult(s.cluster, metrics.ApplyFailure)
		return
	}
	m.ApplyResult(s.cluster, metrics.ApplySuccess)
	m.LastApplySuccess(s.cluster, s.clock.Now())
}

// union returns inventory plus a reference to every object in objs, sorted
// and without duplicates.
func union(inventory []workv1alpha1.ObjectRef, objs []*unstructured.Unstructured) []workv1alpha1.ObjectRef {
	seen := map[workv1alpha1.ObjectRef]bool{}
	out := make([]workv1alpha1.ObjectRef, 0, len(inventory)+len(objs))
	add := func(r workv1alpha1.ObjectRef) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, r := range inventory {
		add(r)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		add(workv1alpha1.ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	slices.SortFunc(out, func(a, b workv1alpha1.ObjectRef) int {
		return strings.Compare(a.Group+"/"+a.Kind+"/"+a.Namespace+"/"+a.Name, b.Group+"/"+b.Kind+"/"+b.Namespace+"/"+b.Name)
	})
	return out
}

package deliver

import (
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
	res, err := mgr.Apply(ctx, objs, st.Inventory)
	if res != nil {
		st.Inventory, st.Objects = res.Inventory, res.Objects
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

func firstFailure(res *apply.Result) string {
	for _, o := range res.Objects {
		if o.Action == apply.ActionFailed {
			return o.Message
		}
	}
	return ""
}

// health reads kstatus for the inventory and sets Healthy and Ready.
func (s *Syncer) health(ctx context.Context, mgr *apply.Manager, st *workv1alpha1.WorkStatus, w *workv1alpha1.Work) bool {
	results, err := mgr.Health(ctx, st.Inventory)
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
			continue
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
	msg := fmt.Sprintf("revision %s applied; %d objects healthy", short(w.Spec.SourceRevision), len(st.Inventory))
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

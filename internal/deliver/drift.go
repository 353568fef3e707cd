package deliver

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// maxDrift bounds the drift records kept in a status, newest last, so
// status does not grow without end.
const maxDrift = 20

// driftDue reports whether an unchanged Work should be compared with the
// member again as a whole.
func (s *Syncer) driftDue() bool {
	return s.opts.DriftInterval > 0 && s.clock.Since(s.lastDriftCheck) >= s.opts.DriftInterval
}

// correctDrift compares an unchanged Work with the member: the objects the
// watch reported, or all of them when suspects is nil (the periodic
// check). Fields owned by other field managers and not set by the Work (an
// HPA's replicas, admission defaults) are not compared, so they are never
// drift.
func (s *Syncer) correctDrift(ctx context.Context, mgr Checker, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus, suspects map[workv1alpha1.ObjectKey]bool) {
	if suspects == nil {
		s.lastDriftCheck = s.clock.Now()
	}
	objs, err := workv1alpha1.Objects(w)
	if err != nil {
		return
	}
	if suspects != nil {
		objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !suspects[workv1alpha1.KeyOf(o)] })
		if len(objs) == 0 {
			return
		}
	}
	res, err := mgr.Check(ctx, objs, st.Inventory)
	if err != nil || res == nil {
		s.log.Error(err, "drift check failed")
		return
	}
	st.Inventory = res.Inventory
	s.recordDrift(st, res)
}

// driftSuspects returns the suspects that may have drifted.
func driftSuspects(suspects map[workv1alpha1.ObjectKey]bool) map[workv1alpha1.ObjectKey]bool {
	out := map[workv1alpha1.ObjectKey]bool{}
	for k, drift := range suspects {
		if drift {
			out[k] = true
		}
	}
	return out
}

// forgetHealth clears the recorded health of the objects in keys (of every
// object when keys is nil), so that it is read from the member again.
func forgetHealth(st *workv1alpha1.WorkStatus, keys map[workv1alpha1.ObjectKey]bool) {
	for i := range st.Objects {
		if _, listed := keys[st.Objects[i].ObjectKey]; keys == nil || listed {
			if st.Objects[i].Health == workv1alpha1.HealthCurrent {
				st.Objects[i].Health = workv1alpha1.HealthUnknown
			}
		}
	}
}

// recordDrift adds the drift res found to st, the log and the metrics. A
// drift reported but not corrected (the warn mode) is recorded once while
// it stays the same.
func (s *Syncer) recordDrift(st *workv1alpha1.WorkStatus, res *apply.Result) {
	now := metav1.NewTime(s.clock.Now())
	for _, d := range res.Drift {
		rec := workv1alpha1.DriftRecord{ObjectRef: d.ObjectRef, Fields: d.Fields, Manager: d.Manager, Deleted: d.Deleted, Time: now}
		switch {
		case !d.Corrected:
			rec.Action = workv1alpha1.DriftReported
		case d.Deleted:
			rec.Action = workv1alpha1.DriftRecreated
		default:
			rec.Action = workv1alpha1.DriftCorrected
		}
		if rec.Action == workv1alpha1.DriftReported && repeated(st.Drift, rec) {
			continue
		}
		object := d.Display()
		if d.Corrected {
			s.log.Info("drift corrected", "object", object, "action", rec.Action, "fields", d.Fields, "manager", d.Manager)
			s.opts.Metrics.DriftCorrected(s.cluster, d.Kind)
		} else {
			s.log.Info("drift reported, not corrected", "object", object, "fields", d.Fields, "manager", d.Manager, "deleted", d.Deleted)
		}
		s.opts.Metrics.DriftDetected(s.cluster, d.Kind)
		st.Drift = append(st.Drift, rec)
	}
	if n := len(st.Drift); n > maxDrift {
		st.Drift = slices.Clone(st.Drift[n-maxDrift:])
	}
}

// repeated reports whether the newest record of rec's object says the same.
func repeated(records []workv1alpha1.DriftRecord, rec workv1alpha1.DriftRecord) bool {
	for i := len(records) - 1; i >= 0; i-- {
		r := records[i]
		if r.Group == rec.Group && r.Kind == rec.Kind && r.Namespace == rec.Namespace && r.Name == rec.Name {
			return r.Action == rec.Action && r.Deleted == rec.Deleted && slices.Equal(r.Fields, rec.Fields) && r.Manager == rec.Manager
		}
	}
	return false
}

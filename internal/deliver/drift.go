package deliver

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// maxDrift bounds the drift records kept in a status, newest last, so
// status does not grow without end.
const maxDrift = 20

// driftDue reports whether an unchanged Work should be compared with the
// member again.
func (s *Syncer) driftDue() bool {
	return s.opts.DriftInterval > 0 && s.clock.Since(s.lastDriftCheck) >= s.opts.DriftInterval
}

// correctDrift re-applies an unchanged Work. The apply compares every
// desired field with the live object (one LIST per kind and namespace) and
// writes only objects that differ: each such write is drift — a change made
// on the member outside propagit — and is recorded and counted. Fields owned
// by other field managers and not set by the Work (an HPA's replicas,
// admission defaults) are not compared, so they are never drift.
func (s *Syncer) correctDrift(ctx context.Context, mgr *apply.Manager, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) {
	s.lastDriftCheck = s.clock.Now()
	objs, err := Objects(w)
	if err != nil {
		return
	}
	res, err := mgr.Apply(ctx, objs, st.Inventory)
	if err != nil || res == nil {
		s.log.Error(err, "drift check failed")
		return
	}
	st.Inventory = res.Inventory
	now := metav1.NewTime(s.clock.Now())
	for _, o := range res.Objects {
		if o.Action != apply.ActionConfigured && o.Action != apply.ActionCreated {
			continue
		}
		action := "Corrected"
		if o.Action == apply.ActionCreated {
			action = "Recreated"
		}
		s.log.Info("drift corrected", "object", o.Kind+"/"+o.Namespace+"/"+o.Name, "action", action)
		st.Drift = append(st.Drift, workv1alpha1.DriftRecord{ObjectRef: o.ObjectRef, Action: action, Time: now})
		s.opts.Metrics.DriftDetected(s.cluster, o.Kind)
		s.opts.Metrics.DriftCorrected(s.cluster, o.Kind)
	}
	if n := len(st.Drift); n > maxDrift {
		st.Drift = slices.Clone(st.Drift[n-maxDrift:])
	}
}

package deliver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func ready(st *workv1alpha1.WorkStatus) bool {
	return meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)
}

// write stores st; the store skips writes that change nothing.
func (s *Syncer) write(ctx context.Context, st *workv1alpha1.WorkStatus) { s.put(ctx, st, true) }

// put stamps st and stores it when changed is true or the driver stamped
// something. A cancelled ctx (shutdown mid-apply) still gets the status
// out, with a short deadline of its own: it holds the inventory of what was
// just created.
func (s *Syncer) put(ctx context.Context, st *workv1alpha1.WorkStatus, changed bool) {
	st.AgentVersion = s.opts.Version
	if s.stamp != nil && s.stamp(st) {
		changed = true
	}
	if !changed {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
	}
	if err := s.status.PutStatus(ctx, s.cluster, st); err != nil {
		s.log.Error(err, "failed to write status")
		return
	}
	s.last = st
}

// backoff doubles the retry delay up to RetryMax.
func (s *Syncer) backoff() time.Duration {
	d := s.opts.RetryMin << min(s.failures, 16)
	s.failures++
	return min(d, s.opts.RetryMax)
}

// set sets one condition, keeping the transition time when the status does
// not change.
func (s *Syncer) set(st *workv1alpha1.WorkStatus, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(s.clock.Now())})
}

package observe

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// readiness gives each member a Ready condition with hysteresis: a new probe
// result takes effect only after it has held for the failure (or success)
// threshold, so one lost probe does not flap a cluster. The transition time
// is when the new result was first seen, so failover tolerations count from
// the first failed probe.
type readiness struct {
	failure, success time.Duration

	mu      sync.Mutex
	members map[string]*memberHealth
}

type memberHealth struct {
	status       metav1.ConditionStatus
	since        time.Time
	pending      metav1.ConditionStatus
	pendingSince time.Time
	lastGood     *clusterv1alpha1.ClusterStatus
}

func newReadiness(failure, success time.Duration) *readiness {
	return &readiness{failure: failure, success: success, members: map[string]*memberHealth{}}
}

// observe folds one probe into the member's state and returns the status
// the engine sees.
func (r *readiness) observe(name string, probe *clusterv1alpha1.ClusterStatus, now time.Time) *clusterv1alpha1.ClusterStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw := readyStatus(probe)
	h := r.members[name]
	if h == nil {
		h = &memberHealth{status: raw, since: now}
		r.members[name] = h
	}
	switch {
	case raw == h.status:
		h.pending = ""
	case raw != h.pending:
		h.pending, h.pendingSince = raw, now
	}
	threshold := r.failure
	if raw == metav1.ConditionTrue {
		threshold = r.success
	}
	if h.pending != "" && now.Sub(h.pendingSince) >= threshold {
		h.status, h.since, h.pending = raw, h.pendingSince, ""
	}
	if raw == metav1.ConditionTrue {
		h.lastGood = probe
	}
	out := probe
	if h.status == metav1.ConditionTrue && raw != metav1.ConditionTrue && h.lastGood != nil {
		out = h.lastGood // a failure not confirmed yet: keep the last good state
	}
	out = out.DeepCopy()
	setReady(out, h.status, h.since, probe)
	return out
}

// forgetAllBut drops the state of members not in keep.
func (r *readiness) forgetAllBut(keep map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.members {
		if !keep[name] {
			delete(r.members, name)
		}
	}
}

func readyStatus(st *clusterv1alpha1.ClusterStatus) metav1.ConditionStatus {
	if st == nil {
		return metav1.ConditionUnknown
	}
	if c := meta.FindStatusCondition(st.Conditions, clusterv1alpha1.ConditionReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// readyReason is the reason and message of a probe's Ready condition.
func readyReason(st *clusterv1alpha1.ClusterStatus) string {
	if st != nil {
		if c := meta.FindStatusCondition(st.Conditions, clusterv1alpha1.ConditionReady); c != nil {
			return c.Reason + ": " + c.Message
		}
	}
	return "no Ready condition"
}

// setReady writes the effective Ready condition, keeping the probe's reason
// and message when they agree with it.
func setReady(st *clusterv1alpha1.ClusterStatus, status metav1.ConditionStatus, since time.Time, probe *clusterv1alpha1.ClusterStatus) {
	cond := metav1.Condition{Type: clusterv1alpha1.ConditionReady, Status: status, LastTransitionTime: metav1.NewTime(since),
		Reason: workv1alpha1.ReasonProbed, Message: "probe result"}
	if c := meta.FindStatusCondition(probe.Conditions, clusterv1alpha1.ConditionReady); c != nil {
		cond.Reason, cond.Message = c.Reason, c.Message
		if c.Status != status {
			cond.Reason = "Pending" + c.Reason
			cond.Message = "not confirmed yet: " + c.Message
		}
	}
	// The transition time is the hysteresis' own (since), not the time of
	// this call, so the condition is replaced whole.
	meta.RemoveStatusCondition(&st.Conditions, clusterv1alpha1.ConditionReady)
	st.Conditions = append(st.Conditions, cond)
}

package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Ready condition statuses, as in a Cluster's Ready condition.
const (
	StatusTrue    = "True"
	StatusFalse   = "False"
	StatusUnknown = "Unknown"
)

// Apply results.
const (
	ApplySuccess = "success"
	ApplyFailure = "failure"
)

// Object actions of an apply: the lower-cased apply actions.
var objectActions = []string{"created", "configured", "unchanged", "pruned", "skipped", "failed"}

// ClusterReady records a member's Ready condition as True or False.
func (r *Recorder) ClusterReady(cluster string, ready bool) {
	status := StatusFalse
	if ready {
		status = StatusTrue
	}
	r.ClusterReadyStatus(cluster, status)
}

// ClusterReadyStatus records a member's Ready condition status: True, False
// or Unknown (any other value counts as Unknown). The series of the current
// status is 1, the other two are 0, like Karmada's cluster ready metric.
func (r *Recorder) ClusterReadyStatus(cluster, status string) {
	if r == nil {
		return
	}
	status = oneOf(status, StatusTrue, StatusFalse, StatusUnknown)
	if status == Other {
		status = StatusUnknown
	}
	for _, s := range []string{StatusTrue, StatusFalse, StatusUnknown} {
		v := 0.0
		if s == status {
			v = 1
		}
		r.clusterReady.WithLabelValues(cluster, s).Set(v)
	}
}

// ApplyResult counts one apply of a member's Work; result is success or
// failure.
func (r *Recorder) ApplyResult(cluster, result string) {
	if r == nil {
		return
	}
	r.apply.WithLabelValues(cluster, oneOf(result, ApplySuccess, ApplyFailure)).Inc()
}

// ObjectsApplied adds n objects handled with action on a member. action is
// one of the apply actions (Created, Configured, Unchanged, Pruned, Skipped,
// Failed), in any case; it is recorded lower-cased.
func (r *Recorder) ObjectsApplied(cluster, action string, n int) {
	if r == nil || n <= 0 {
		return
	}
	action = oneOf(strings.ToLower(action), objectActions...)
	r.appliedObjects.WithLabelValues(cluster, action).Add(float64(n))
}

// LastApplySuccess records the time of the last successful apply on a
// member; /metrics also reports the seconds elapsed since, computed when
// scraped. A member shows no series before its first success.
func (r *Recorder) LastApplySuccess(cluster string, t time.Time) {
	if r == nil {
		return
	}
	r.lastApply.set(cluster, t)
}

// DriftDetected counts one object of kind found drifted on a member.
func (r *Recorder) DriftDetected(cluster, kind string) {
	if r == nil {
		return
	}
	r.driftDetected.WithLabelValues(cluster, kind).Inc()
}

// DriftCorrected counts one drifted object of kind reverted on a member.
func (r *Recorder) DriftCorrected(cluster, kind string) {
	if r == nil {
		return
	}
	r.driftCorrected.WithLabelValues(cluster, kind).Inc()
}

// FailoverDuration observes the time from a member turning NotReady to an
// application being placed elsewhere.
func (r *Recorder) FailoverDuration(d time.Duration) {
	if r == nil {
		return
	}
	r.failoverSeconds.Observe(d.Seconds())
}

// Failover counts replicas moved from one member to another.
func (r *Recorder) Failover(from, to string) {
	if r == nil {
		return
	}
	r.failover.WithLabelValues(from, to).Inc()
}

// PruneHeld records whether a member is held by the prune guard.
func (r *Recorder) PruneHeld(cluster string, held bool) {
	if r == nil {
		return
	}
	v := 0.0
	if held {
		v = 1
	}
	r.pruneHeld.WithLabelValues(cluster).Set(v)
}

// RenderErrors records how many templates failed to render for a member.
func (r *Recorder) RenderErrors(cluster string, n int) {
	if r == nil {
		return
	}
	r.renderErrors.WithLabelValues(cluster).Set(float64(n))
}

// ForgetCluster deletes every series of a member that left Git, including
// failovers from or to it.
func (r *Recorder) ForgetCluster(cluster string) {
	if r == nil {
		return
	}
	byCluster := prometheus.Labels{LabelCluster: cluster}
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{r.clusterReady, r.apply, r.appliedObjects, r.driftDetected, r.driftCorrected, r.pruneHeld, r.renderErrors} {
		v.DeletePartialMatch(byCluster)
	}
	r.failover.DeletePartialMatch(prometheus.Labels{LabelFromCluster: cluster})
	r.failover.DeletePartialMatch(prometheus.Labels{LabelToCluster: cluster})
	r.lastApply.forget(cluster)
}

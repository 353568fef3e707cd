package metrics

import (
	"time"
)

// Work states.
const (
	WorkApplied     = "applied"
	WorkProgressing = "progressing"
	WorkFailed      = "failed"
	WorkSuspended   = "suspended"
)

// WorkStates lists the states SetWorks reports, in order.
var WorkStates = []string{WorkApplied, WorkProgressing, WorkFailed, WorkSuspended}

// Schedule results.
const (
	ScheduleScheduled     = "scheduled"
	ScheduleUnschedulable = "unschedulable"
	ScheduleError         = "error"
)

// Policy kinds.
const (
	KindPropagationPolicy        = "PropagationPolicy"
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
)

// Reconcile results, after the retry classes of the controller's errors.
const (
	ReconcileSuccess = "success"
	ReconcileFailure = "failure"
	ReconcileStalled = "stalled"
	ReconcileWaiting = "waiting"
)

// Works sets the number of Works in one state: applied, progressing, failed
// or suspended.
func (r *Recorder) Works(state string, n int) {
	if r == nil {
		return
	}
	r.works.WithLabelValues(oneOf(state, WorkStates...)).Set(float64(n))
}

// SetWorks sets every Work state at once: states missing from byState are
// 0; unknown states are summed under "other", which is removed when there
// are none.
func (r *Recorder) SetWorks(byState map[string]int) {
	if r == nil {
		return
	}
	other, hasOther := 0, false
	for s, n := range byState {
		if oneOf(s, WorkStates...) == Other {
			other, hasOther = other+n, true
		}
	}
	for _, s := range WorkStates {
		r.works.WithLabelValues(s).Set(float64(byState[s]))
	}
	if hasOther {
		r.works.WithLabelValues(Other).Set(float64(other))
	} else {
		r.works.DeleteLabelValues(Other)
	}
}

// ScheduleAttempt counts one scheduling of a template: scheduled,
// unschedulable or error.
func (r *Recorder) ScheduleAttempt(result string) {
	if r == nil {
		return
	}
	r.scheduleAttempt.WithLabelValues(oneOf(result, ScheduleScheduled, ScheduleUnschedulable, ScheduleError)).Inc()
}

// PolicyMatches sets the number of templates matched by policies of kind
// PropagationPolicy or ClusterPropagationPolicy.
func (r *Recorder) PolicyMatches(kind string, n int) {
	if r == nil {
		return
	}
	r.policyMatches.WithLabelValues(oneOf(kind, KindPropagationPolicy, KindClusterPropagationPolicy)).Set(float64(n))
}

// ReconcileDuration observes one hub reconcile; result is success, failure,
// stalled or waiting.
func (r *Recorder) ReconcileDuration(d time.Duration, result string) {
	if r == nil {
		return
	}
	result = oneOf(result, ReconcileSuccess, ReconcileFailure, ReconcileStalled, ReconcileWaiting)
	r.reconcile.WithLabelValues(result).Observe(d.Seconds())
}

// SourceFetchError counts one failed fetch of the Git source.
func (r *Recorder) SourceFetchError() {
	if r == nil {
		return
	}
	r.fetchErrors.Inc()
}

// SourceFetchSuccess records the time of a successful fetch; /metrics also
// reports the seconds elapsed since, for a "source stale" alert.
func (r *Recorder) SourceFetchSuccess(t time.Time) {
	if r == nil {
		return
	}
	r.lastFetch.set("", t)
}

// SourceRevisionTimestamp records the commit time of the revision loaded.
// The revision itself is never a label.
func (r *Recorder) SourceRevisionTimestamp(t time.Time) {
	if r == nil {
		return
	}
	r.revisionTime.Set(unixSeconds(t))
}

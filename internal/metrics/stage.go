package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reconcile stages, the path from a commit to its status: the hub's loop
// (fetch, load, observe, render, record, dispatch), then each member's
// worker (apply, status).
const (
	StageFetch    = "fetch"
	StageLoad     = "load"
	StageObserve  = "observe"
	StageRender   = "render"
	StageRecord   = "record"
	StageDispatch = "dispatch"
	StageApply    = "apply"
	StageStatus   = "status"
)

// Stages lists the stages ReconcileStage records, in pipeline order.
var Stages = []string{StageFetch, StageLoad, StageObserve, StageRender, StageRecord, StageDispatch, StageApply, StageStatus}

// newStageHistogram is propagit_reconcile_stage_seconds: one histogram per
// stage, so a stage that turns slow is seen apart from the others.
func newStageHistogram() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "propagit_reconcile_stage_seconds",
		Help: "Duration of one stage of a reconcile, from a commit to its status: fetch, load, observe, render, record " +
			"(Works written), dispatch (waiting for the member's worker), apply and status (per member).",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{LabelStage})
}

// ReconcileStage observes one run of a stage (see Stages; others are
// recorded as "other").
func (r *Recorder) ReconcileStage(stage string, d time.Duration) {
	if r == nil {
		return
	}
	r.stages.WithLabelValues(oneOf(stage, Stages...)).Observe(d.Seconds())
}

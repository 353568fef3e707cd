package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestSetWorksSetsEveryState(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.SetWorks(map[string]int{WorkApplied: 5, WorkFailed: 1, "exploded": 2, "melted": 1})
	want := `
# HELP propagit_works Number of Works by state.
# TYPE propagit_works gauge
propagit_works{state="applied"} 5
propagit_works{state="failed"} 1
propagit_works{state="other"} 3
propagit_works{state="progressing"} 0
propagit_works{state="suspended"} 0
`
	if err := testutil.CollectAndCompare(r.works, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	r.SetWorks(map[string]int{WorkProgressing: 2})
	r.Works(WorkSuspended, 4)
	want = `
# HELP propagit_works Number of Works by state.
# TYPE propagit_works gauge
propagit_works{state="applied"} 0
propagit_works{state="failed"} 0
propagit_works{state="progressing"} 2
propagit_works{state="suspended"} 4
`
	if err := testutil.CollectAndCompare(r.works, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestScheduleAttemptsAreCountedByResult(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	for _, res := range []string{ScheduleScheduled, ScheduleScheduled, ScheduleUnschedulable, ScheduleError, "bogus"} {
		r.ScheduleAttempt(res)
	}
	want := `
# HELP propagit_schedule_attempts_total Scheduling attempts of a resource template by result.
# TYPE propagit_schedule_attempts_total counter
propagit_schedule_attempts_total{result="error"} 1
propagit_schedule_attempts_total{result="other"} 1
propagit_schedule_attempts_total{result="scheduled"} 2
propagit_schedule_attempts_total{result="unschedulable"} 1
`
	if err := testutil.CollectAndCompare(r.scheduleAttempt, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestPolicyMatchesAreSetByKind(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.PolicyMatches(KindPropagationPolicy, 7)
	r.PolicyMatches(KindClusterPropagationPolicy, 3)
	r.PolicyMatches(KindPropagationPolicy, 6)
	want := `
# HELP propagit_policy_matches Resource templates matched by a policy, by policy kind.
# TYPE propagit_policy_matches gauge
propagit_policy_matches{kind="ClusterPropagationPolicy"} 3
propagit_policy_matches{kind="PropagationPolicy"} 6
`
	if err := testutil.CollectAndCompare(r.policyMatches, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestReconcileDurationIsObservedByResult(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	r.ReconcileDuration(200*time.Millisecond, ReconcileSuccess)
	r.ReconcileDuration(3*time.Second, ReconcileSuccess)
	r.ReconcileDuration(40*time.Second, ReconcileFailure)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type obs struct {
		count uint64
		sum   float64
		le1   uint64
	}
	got := map[string]obs{}
	for _, mf := range mfs {
		if mf.GetName() != "propagit_reconcile_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			o := obs{count: h.GetSampleCount(), sum: h.GetSampleSum()}
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 1 {
					o.le1 = b.GetCumulativeCount()
				}
			}
			got[m.GetLabel()[0].GetValue()] = o
		}
	}
	want := map[string]obs{
		ReconcileSuccess: {count: 2, sum: 3.2, le1: 1},
		ReconcileFailure: {count: 1, sum: 40, le1: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	for res, w := range want {
		g := got[res]
		if g.count != w.count || g.le1 != w.le1 || g.sum < w.sum-1e-9 || g.sum > w.sum+1e-9 {
			t.Errorf("result %s: got %+v, want %+v", res, g, w)
		}
	}
}

func TestSourceMetrics(t *testing.T) {
	r, reg, clk := newTestRecorder(t)
	r.SourceFetchError()
	r.SourceFetchError()
	r.SourceRevisionTimestamp(epoch.Add(-time.Hour))
	r.SourceFetchSuccess(epoch)
	clk.SetTime(epoch.Add(5 * time.Minute))
	want := `
# HELP propagit_source_fetch_errors_total Failed fetches of the Git source.
# TYPE propagit_source_fetch_errors_total counter
propagit_source_fetch_errors_total 2
# HELP propagit_source_revision_timestamp_seconds Commit time of the source revision last loaded, in Unix seconds.
# TYPE propagit_source_revision_timestamp_seconds gauge
propagit_source_revision_timestamp_seconds 1.767319445e+09
# HELP propagit_source_last_fetch_success_timestamp_seconds Time of the last successful fetch of the Git source, in Unix seconds.
# TYPE propagit_source_last_fetch_success_timestamp_seconds gauge
propagit_source_last_fetch_success_timestamp_seconds 1.767323045e+09
# HELP propagit_seconds_since_last_source_fetch Seconds since the last successful fetch of the Git source.
# TYPE propagit_seconds_since_last_source_fetch gauge
propagit_seconds_since_last_source_fetch 300
`
	names := []string{
		"propagit_source_fetch_errors_total", "propagit_source_revision_timestamp_seconds",
		"propagit_source_last_fetch_success_timestamp_seconds", "propagit_seconds_since_last_source_fetch",
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

func TestReconcileStageKeepsStagesApart(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.ReconcileStage(StageRecord, 30*time.Millisecond)
	r.ReconcileStage(StageRecord, 40*time.Millisecond)
	r.ReconcileStage(StageApply, 2*time.Second)
	r.ReconcileStage("made-up", time.Second)
	if got := testutil.CollectAndCount(r.stages); got != 3 {
		t.Fatalf("series = %d, want 3 (record, apply, other)", got)
	}
	for stage, want := range map[string]int{StageRecord: 2, StageApply: 1, Other: 1, StageStatus: 0} {
		h := r.stages.WithLabelValues(stage).(prometheus.Histogram)
		m := &dto.Metric{}
		if err := h.Write(m); err != nil {
			t.Fatal(err)
		}
		if got := int(m.GetHistogram().GetSampleCount()); got != want {
			t.Errorf("stage %s: %d observations, want %d", stage, got, want)
		}
	}
}

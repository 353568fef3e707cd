package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestRecorder(t *testing.T) (*Recorder, *prometheus.Registry, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(epoch)
	r := NewRecorderWithClock(clk)
	reg := prometheus.NewPedanticRegistry()
	r.MustRegister(reg)
	return r, reg, clk
}

// exercise calls every recording method once with plausible values.
func exercise(r *Recorder) {
	r.ClusterReady("member1", true)
	r.SetWorks(map[string]int{WorkApplied: 1})
	r.ScheduleAttempt(ScheduleScheduled)
	r.PolicyMatches(KindPropagationPolicy, 2)
	r.ApplyResult("member1", ApplySuccess)
	r.ObjectsApplied("member1", "Created", 3)
	r.DriftDetected("member1", "Deployment")
	r.DriftCorrected("member1", "Deployment")
	r.ReconcileDuration(time.Second, ReconcileSuccess)
	r.ReconcileStage(StageRecord, time.Millisecond)
	r.SourceFetchError()
	r.SourceFetchSuccess(epoch)
	r.SourceRevisionTimestamp(epoch)
	r.LastApplySuccess("member1", epoch)
	r.Failover("member1", "member2")
	r.WebhookRequest(ProviderGitHub, WebhookAccepted)
}

var allNames = []string{
	"propagit_applied_objects_total",
	"propagit_apply_total",
	"propagit_cluster_ready_condition",
	"propagit_drift_corrected_total",
	"propagit_drift_detected_total",
	"propagit_failover_duration_seconds", "propagit_failover_total",
	"propagit_last_apply_success_timestamp_seconds",
	"propagit_policy_matches",
	"propagit_reconcile_duration_seconds",
	"propagit_reconcile_stage_seconds",
	"propagit_schedule_attempts_total",
	"propagit_seconds_since_last_apply",
	"propagit_seconds_since_last_source_fetch",
	"propagit_source_fetch_errors_total",
	"propagit_source_last_fetch_success_timestamp_seconds",
	"propagit_source_revision_timestamp_seconds",
	"propagit_webhook_requests_total",
	"propagit_works",
}

func TestEveryMetricIsPrefixedAndGathered(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	exercise(r)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
	}
	if !slices.Equal(got, allNames) {
		t.Errorf("gathered metric names:\n got %v\nwant %v", got, allNames)
	}
}

func TestNoLabelCarriesARevisionOrUID(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	exercise(r)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"revision", "uid", "commit", "sha", "digest"}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				name := strings.ToLower(lp.GetName())
				for _, f := range forbidden {
					if strings.Contains(name, f) {
						t.Errorf("%s has label %q: revisions and UIDs are unbounded", mf.GetName(), lp.GetName())
					}
				}
			}
		}
	}
}

func TestMetricNamesPassPromlint(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	exercise(r)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestCollectorsAreUnregisteredUntilMustRegister(t *testing.T) {
	r := NewRecorder()
	reg := prometheus.NewRegistry()
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 0 {
		t.Fatalf("fresh registry: %d families, err %v", len(mfs), err)
	}
	r.MustRegister(reg)
	for _, c := range r.Collectors() {
		if err := reg.Register(c); err == nil {
			t.Errorf("collector %T registered twice without error", c)
		}
	}
	// A second Recorder registers on its own registry without conflict.
	NewRecorder().MustRegister(prometheus.NewRegistry())
}

func TestNilRecorderIsANoOp(t *testing.T) {
	var r *Recorder
	exercise(r)
	r.ClusterReadyStatus("member1", StatusUnknown)
	r.Works(WorkApplied, 1)
	r.ForgetCluster("member1")
}

package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestClusterReadyMirrorsTheCurrentStatus(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	r.ClusterReady("member1", true)
	r.ClusterReady("member2", true)
	r.ClusterReady("member2", false)
	r.ClusterReadyStatus("member3", StatusUnknown)
	r.ClusterReadyStatus("member4", "Bogus")
	want := `
# HELP propagit_cluster_ready_condition Ready condition of a member cluster: 1 for its current status (True, False or Unknown), 0 for the others.
# TYPE propagit_cluster_ready_condition gauge
propagit_cluster_ready_condition{cluster="member1",status="False"} 0
propagit_cluster_ready_condition{cluster="member1",status="True"} 1
propagit_cluster_ready_condition{cluster="member1",status="Unknown"} 0
propagit_cluster_ready_condition{cluster="member2",status="False"} 1
propagit_cluster_ready_condition{cluster="member2",status="True"} 0
propagit_cluster_ready_condition{cluster="member2",status="Unknown"} 0
propagit_cluster_ready_condition{cluster="member3",status="False"} 0
propagit_cluster_ready_condition{cluster="member3",status="True"} 0
propagit_cluster_ready_condition{cluster="member3",status="Unknown"} 1
propagit_cluster_ready_condition{cluster="member4",status="False"} 0
propagit_cluster_ready_condition{cluster="member4",status="True"} 0
propagit_cluster_ready_condition{cluster="member4",status="Unknown"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "propagit_cluster_ready_condition"); err != nil {
		t.Error(err)
	}
}

func TestApplyResultsAndObjectsAreCountedPerCluster(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.ApplyResult("member1", ApplySuccess)
	r.ApplyResult("member1", ApplySuccess)
	r.ApplyResult("member1", ApplyFailure)
	r.ApplyResult("member2", "exploded")
	r.ObjectsApplied("member1", "Created", 3)
	r.ObjectsApplied("member1", "created", 2)
	r.ObjectsApplied("member1", "Pruned", 1)
	r.ObjectsApplied("member1", "Teleported", 4)
	r.ObjectsApplied("member1", "Failed", 0)
	want := `
# HELP propagit_apply_total Work applies on a member cluster by result.
# TYPE propagit_apply_total counter
propagit_apply_total{cluster="member1",result="failure"} 1
propagit_apply_total{cluster="member1",result="success"} 2
propagit_apply_total{cluster="member2",result="other"} 1
# HELP propagit_applied_objects_total Objects handled by applies on a member cluster, by action.
# TYPE propagit_applied_objects_total counter
propagit_applied_objects_total{action="created",cluster="member1"} 5
propagit_applied_objects_total{action="other",cluster="member1"} 4
propagit_applied_objects_total{action="pruned",cluster="member1"} 1
`
	if err := testutil.CollectAndCompare(r.apply, strings.NewReader(want), "propagit_apply_total"); err != nil {
		t.Error(err)
	}
	if err := testutil.CollectAndCompare(r.appliedObjects, strings.NewReader(want), "propagit_applied_objects_total"); err != nil {
		t.Error(err)
	}
}

func TestDriftIsCountedByClusterAndKind(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.DriftDetected("member1", "Deployment")
	r.DriftDetected("member1", "Deployment")
	r.DriftDetected("member2", "ConfigMap")
	r.DriftCorrected("member1", "Deployment")
	if got := testutil.ToFloat64(r.driftDetected.WithLabelValues("member1", "Deployment")); got != 2 {
		t.Errorf("drift detected member1/Deployment = %v, want 2", got)
	}
	if got := testutil.ToFloat64(r.driftDetected.WithLabelValues("member2", "ConfigMap")); got != 1 {
		t.Errorf("drift detected member2/ConfigMap = %v, want 1", got)
	}
	if got := testutil.ToFloat64(r.driftCorrected.WithLabelValues("member1", "Deployment")); got != 1 {
		t.Errorf("drift corrected member1/Deployment = %v, want 1", got)
	}
	if got := testutil.CollectAndCount(r.driftCorrected); got != 1 {
		t.Errorf("drift corrected series = %d, want 1", got)
	}
}

func TestSecondsSinceLastApplyIsComputedAtScrape(t *testing.T) {
	r, reg, clk := newTestRecorder(t)
	r.LastApplySuccess("member1", epoch)
	r.LastApplySuccess("member2", epoch.Add(-30*time.Second))
	clk.SetTime(epoch.Add(90 * time.Second))
	want := `
# HELP propagit_last_apply_success_timestamp_seconds Time of the last successful apply on a member cluster, in Unix seconds.
# TYPE propagit_last_apply_success_timestamp_seconds gauge
propagit_last_apply_success_timestamp_seconds{cluster="member1"} 1.767323045e+09
propagit_last_apply_success_timestamp_seconds{cluster="member2"} 1.767323015e+09
# HELP propagit_seconds_since_last_apply Seconds since the last successful apply on a member cluster.
# TYPE propagit_seconds_since_last_apply gauge
propagit_seconds_since_last_apply{cluster="member1"} 90
propagit_seconds_since_last_apply{cluster="member2"} 120
`
	names := []string{"propagit_last_apply_success_timestamp_seconds", "propagit_seconds_since_last_apply"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// A later success resets the age; a clock behind the stamp reads 0.
	r.LastApplySuccess("member1", epoch.Add(100*time.Second))
	want = `
# HELP propagit_seconds_since_last_apply Seconds since the last successful apply on a member cluster.
# TYPE propagit_seconds_since_last_apply gauge
propagit_seconds_since_last_apply{cluster="member1"} 0
propagit_seconds_since_last_apply{cluster="member2"} 120
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "propagit_seconds_since_last_apply"); err != nil {
		t.Error(err)
	}
}

func TestFailoverIsCountedBetweenClusters(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.Failover("member1", "member2")
	r.Failover("member1", "member2")
	r.Failover("member2", "member3")
	want := `
# HELP propagit_failover_total Replicas moved away from an unhealthy member cluster.
# TYPE propagit_failover_total counter
propagit_failover_total{from_cluster="member1",to_cluster="member2"} 2
propagit_failover_total{from_cluster="member2",to_cluster="member3"} 1
`
	if err := testutil.CollectAndCompare(r.failover, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestFailoverDurationIsObserved(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.FailoverDuration(12 * time.Second)
	r.FailoverDuration(40 * time.Second)
	if got := testutil.CollectAndCount(r.failoverSeconds); got != 1 {
		t.Fatalf("want one histogram, got %d", got)
	}
	m := &dto.Metric{}
	if err := r.failoverSeconds.Write(m); err != nil {
		t.Fatal(err)
	}
	if m.GetHistogram().GetSampleCount() != 2 || m.GetHistogram().GetSampleSum() != 52 {
		t.Errorf("want 2 samples summing to 52 s, got %d / %v", m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum())
	}
}

func TestForgetClusterDeletesEveryClusterSeries(t *testing.T) {
	r, reg, _ := newTestRecorder(t)
	for _, c := range []string{"member1", "member2"} {
		r.ClusterReady(c, true)
		r.ApplyResult(c, ApplySuccess)
		r.ObjectsApplied(c, "Configured", 1)
		r.DriftDetected(c, "Deployment")
		r.DriftCorrected(c, "Deployment")
		r.LastApplySuccess(c, epoch)
	}
	r.Failover("member1", "member2")
	r.Failover("member2", "member1")
	r.Failover("member3", "member4")
	r.ForgetCluster("member2")

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	perCluster := map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case LabelCluster, LabelFromCluster, LabelToCluster:
					perCluster[lp.GetValue()]++
				}
			}
		}
	}
	if perCluster["member2"] != 0 {
		t.Errorf("member2 still has %d series after ForgetCluster", perCluster["member2"])
	}
	// member1: 3 ready + apply + objects + 2 drift + 2 age series = 9; its
	// failovers went to or came from member2, so they are gone too.
	if perCluster["member1"] != 9 {
		t.Errorf("member1 has %d series, want 9", perCluster["member1"])
	}
	if got := testutil.ToFloat64(r.failover.WithLabelValues("member3", "member4")); got != 1 {
		t.Errorf("unrelated failover = %v, want 1", got)
	}
}

package observe

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

func probe(status metav1.ConditionStatus) *clusterv1alpha1.ClusterStatus {
	return &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: status, Reason: "R"}}}
}

func TestReadinessHysteresis(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newReadiness(10*time.Second, 20*time.Second)
	steps := []struct {
		at    time.Duration
		probe metav1.ConditionStatus
		want  metav1.ConditionStatus
		since time.Duration
	}{
		{0, "True", "True", 0},
		{5 * time.Second, "Unknown", "True", 0},                    // one lost probe: no flap
		{8 * time.Second, "True", "True", 0},                       // it answers again
		{10 * time.Second, "Unknown", "True", 0},                   // a new failure starts
		{19 * time.Second, "Unknown", "True", 0},                   // held 9 s < 10 s
		{20 * time.Second, "Unknown", "Unknown", 10 * time.Second}, // held 10 s: flips, since its first failed probe
		{25 * time.Second, "True", "Unknown", 10 * time.Second},
		{45 * time.Second, "True", "True", 25 * time.Second}, // success held 20 s
	}
	for _, s := range steps {
		got := r.observe("m1", probe(s.probe), t0.Add(s.at))
		cond := got.Conditions[0]
		if cond.Status != s.want || !cond.LastTransitionTime.Time.Equal(t0.Add(s.since)) {
			t.Fatalf("at %s probe %s: got %s since %s, want %s since %s", s.at, s.probe, cond.Status,
				cond.LastTransitionTime.Sub(t0), s.want, s.since)
		}
	}
}

package controller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// oneStatus is a status store holding one agent's last report.
type oneStatus struct{ st *workv1alpha1.WorkStatus }

func (s oneStatus) GetStatus(context.Context, string) (*workv1alpha1.WorkStatus, error) {
	return s.st.DeepCopy(), nil
}

func (oneStatus) PutStatus(context.Context, string, *workv1alpha1.WorkStatus) error { return nil }

// A pull member is not Ready since its heartbeat went stale, whenever the
// controller looks: failover tolerations count from that time.
func TestPullStateStaleSinceTheHeartbeatTimedOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	report := &workv1alpha1.WorkStatus{Heartbeat: &metav1.Time{Time: t0},
		Cluster: &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "ClusterReady"}}}}
	opts := DefaultOptions()
	opts.PullHeartbeatTimeout = time.Minute
	c := New(opts, nil, nil, oneStatus{report}, nil, logr.Discard())
	clk := clocktesting.NewFakeClock(t0.Add(30 * time.Second))
	c.clock = clk
	if got := c.pullState(context.Background(), "m1").Conditions[0]; got.Status != "True" {
		t.Fatalf("fresh heartbeat: Ready %s, want True", got.Status)
	}
	for _, at := range []time.Duration{61 * time.Second, 5 * time.Minute, time.Hour} {
		clk.SetTime(t0.Add(at))
		got := c.pullState(context.Background(), "m1").Conditions[0]
		if got.Status != "Unknown" || !got.LastTransitionTime.Equal(&metav1.Time{Time: t0.Add(time.Minute)}) {
			t.Errorf("at %s: Ready %s since %s, want Unknown since the heartbeat timed out (%s)", at, got.Status,
				got.LastTransitionTime.UTC(), t0.Add(time.Minute))
		}
	}
}

package observe

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// statuses is a status store of agents' reports; err, when set, fails
// every read, and block, when set, holds reads of that member until their
// context ends.
type statuses struct {
	mu     sync.Mutex
	byName map[string]*workv1alpha1.WorkStatus
	err    error
	block  string
}

func (s *statuses) GetStatus(ctx context.Context, name string) (*workv1alpha1.WorkStatus, error) {
	if name == s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	return s.byName[name].DeepCopy(), nil
}

func pullCluster(name string) *clusterv1alpha1.Cluster {
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	cl.Spec.SyncMode = clusterv1alpha1.SyncModePull
	return cl
}

func report(at time.Time) *workv1alpha1.WorkStatus {
	return &workv1alpha1.WorkStatus{Heartbeat: &metav1.Time{Time: at},
		Cluster: &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "ClusterReady"}}}}
}

func readyOf(t *testing.T, obs Observation, name string) metav1.Condition {
	t.Helper()
	st := obs.Status[name]
	if st == nil || len(st.Conditions) == 0 {
		t.Fatalf("%s: no state observed", name)
	}
	return st.Conditions[0]
}

// A pull member is not Ready since its heartbeat went stale, whenever the
// hub looks: failover tolerations count from that time.
func TestPullStateStaleSinceTheHeartbeatTimedOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := New(Options{PullHeartbeatTimeout: time.Minute}, nil, &statuses{byName: map[string]*workv1alpha1.WorkStatus{"m1": report(t0)}}, logr.Discard())
	clk := clocktesting.NewFakeClock(t0.Add(30 * time.Second))
	o.clock = clk
	members := []*clusterv1alpha1.Cluster{pullCluster("m1")}
	if got := readyOf(t, o.Observe(t.Context(), members), "m1"); got.Status != "True" {
		t.Fatalf("fresh heartbeat: Ready %s, want True", got.Status)
	}
	for _, at := range []time.Duration{61 * time.Second, 5 * time.Minute, time.Hour} {
		clk.SetTime(t0.Add(at))
		got := readyOf(t, o.Observe(t.Context(), members), "m1")
		if got.Status != "Unknown" || !got.LastTransitionTime.Equal(&metav1.Time{Time: t0.Add(time.Minute)}) {
			t.Errorf("at %s: Ready %s since %s, want Unknown since the heartbeat timed out (%s)", at, got.Status,
				got.LastTransitionTime.UTC(), t0.Add(time.Minute))
		}
	}
}

// A status read that fails is logged, and the report read last stands in:
// the member neither silently loses its state nor keeps a fresh one for
// ever (its heartbeat keeps ageing).
func TestPullReadErrorIsLoggedAndTheLastReportStands(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &statuses{byName: map[string]*workv1alpha1.WorkStatus{"m1": report(t0)}}
	var logged []string
	var mu sync.Mutex
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{})
	o := New(Options{PullHeartbeatTimeout: time.Minute}, nil, store, log)
	clk := clocktesting.NewFakeClock(t0.Add(10 * time.Second))
	o.clock = clk
	members := []*clusterv1alpha1.Cluster{pullCluster("m1")}
	o.Observe(t.Context(), members)

	store.mu.Lock()
	store.err = errors.New("git fetch failed: 503")
	store.mu.Unlock()
	if got := readyOf(t, o.Observe(t.Context(), members), "m1"); got.Status != "True" {
		t.Errorf("read failed with a fresh last report: Ready %s, want True (the last report stands)", got.Status)
	}
	mu.Lock()
	joined := strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(joined, "git fetch failed: 503") || !strings.Contains(joined, `"cluster"="m1"`) {
		t.Errorf("the read error was not logged with its cluster; log:\n%s", joined)
	}
	clk.SetTime(t0.Add(2 * time.Minute))
	if got := readyOf(t, o.Observe(t.Context(), members), "m1"); got.Status != "Unknown" {
		t.Errorf("store unreadable past the heartbeat timeout: Ready %s, want Unknown", got.Status)
	}
}

// probes is a Prober that counts its calls and answers Ready.
type probes struct{ calls atomic.Int32 }

func (p *probes) Probe(context.Context, *clusterv1alpha1.Cluster) *clusterv1alpha1.ClusterStatus {
	p.calls.Add(1)
	return probe("True")
}

// One member whose status read hangs holds up neither the others nor the
// pass beyond the timeout: members are observed in parallel, each call
// bounded.
func TestObserveBoundsEachCallAndRunsInParallel(t *testing.T) {
	store := &statuses{byName: map[string]*workv1alpha1.WorkStatus{"fast": report(time.Now())}, block: "slow"}
	p := &probes{}
	o := New(Options{Timeout: 200 * time.Millisecond}, p, store, logr.Discard())
	push := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "push"}}
	done := make(chan Observation, 1)
	go func() {
		done <- o.Observe(t.Context(), []*clusterv1alpha1.Cluster{pullCluster("slow"), pullCluster("fast"), push})
	}()
	select {
	case obs := <-done:
		if obs.Status["fast"] == nil || obs.Status["push"] == nil {
			t.Errorf("members that answer were not observed: %v", obs.Status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Observe did not return: a hanging status read holds up the pass")
	}
}

// A member removed from Git is forgotten: when it is added again it is
// probed afresh, not answered from a cached result of its earlier life.
func TestRemovedMemberIsProbedAfreshWhenItReturns(t *testing.T) {
	p := &probes{}
	o := New(Options{Interval: time.Hour}, p, &statuses{}, logr.Discard())
	m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1", ResourceVersion: "1"}}
	o.Observe(t.Context(), []*clusterv1alpha1.Cluster{m1})
	o.Observe(t.Context(), []*clusterv1alpha1.Cluster{m1})
	if n := p.calls.Load(); n != 1 {
		t.Fatalf("within the probe interval: %d probes, want 1 (the result is reused)", n)
	}
	o.Observe(t.Context(), nil)
	o.Observe(t.Context(), []*clusterv1alpha1.Cluster{m1})
	if n := p.calls.Load(); n != 2 {
		t.Errorf("removed and added again: %d probes, want 2 (probed afresh)", n)
	}
}

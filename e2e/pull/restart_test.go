package pull

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// countingSource counts the agent's reads of its Work: one per poll.
type countingSource struct {
	agent.Source
	reads atomic.Int64
}

func (s *countingSource) ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	defer s.reads.Add(1)
	return s.Source.ListCluster(ctx, cluster)
}

// waitPolls waits until the agent has read its Work n more times: n whole
// poll cycles of steady state.
func (s *countingSource) waitPolls(t testing.TB, n int64) time.Duration {
	t.Helper()
	from := s.reads.Load()
	return eventually(t, converge, func() (bool, string) {
		got := s.reads.Load() - from
		return got >= n, fmt.Sprintf("%d of %d polls", got, n)
	})
}

// TestPullAgentRestartNoStorm: an agent in steady state writes nothing to
// its member and no status to Git; a restarted agent (a new process: new
// store, new client) meets an unchanged Work and writes nothing to the
// member either — no re-apply storm — and its status continues: the next
// commit is applied with one write, the changed object, and recorded.
func TestPullAgentRestartNoStorm(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	r := e2etest.HTTPRemote(t)
	ns := randomName("restart")
	const objects = 10

	f := newFleet(t, r.URL)
	f.write("clusters/"+m.Name+".yaml", e2etest.ClusterYAML(m.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, m.Name))
	for i := range objects {
		f.write(fmt.Sprintf("cm-%02d.yaml", i), configMapYAML(ns, fmt.Sprintf("cm-%02d", i), "v1"))
	}
	rev1 := f.CommitPush("ten ConfigMaps for a pull member")
	hubStore := newGitStore(t, gitstore.Options{URL: r.URL, CacheDir: t.TempDir()})
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Options: controllerOptions()})
	c.waitRevision(t, rev1)

	// First agent: applies, then settles.
	var first requestCounter
	store1 := newGitStore(t, gitstore.Options{URL: r.URL})
	src1 := &countingSource{Source: store1}
	a1 := newAgent(t, agentOptions(m.Name), src1, store1, first.wrap(m.Config))
	loop1 := startLoop(t, "first agent", a1.Run)
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
	waitStatus(t, reader, m.Name, "rev1 applied and Ready", appliedReady(rev1))
	_, _, applyWrites := first.counts()
	t.Logf("first agent: %d writes to apply %d objects and their namespace", len(applyWrites), objects)

	// Steady state: whole poll cycles (with probes) cost no write to the
	// member and no status push to Git.
	first.reset()
	pushes := r.Server.Pushes()
	window := src1.waitPolls(t, 10)
	reads, dry, writes := first.counts()
	statusPushes := r.Server.Pushes() - pushes
	t.Logf("steady state over %s (10 polls): member reads=%d dry-runs=%d writes=%d; status pushes=%d (%.1f/min)",
		window.Round(time.Millisecond), reads, dry, len(writes), statusPushes, perMinute(statusPushes, window))
	if len(writes) > 0 || dry > 0 {
		t.Errorf("steady state: %d writes %v and %d dry runs to the member, want none", len(writes), writes, dry)
	}
	if statusPushes > 0 {
		t.Errorf("steady state: %d status pushes in %s, want none (status is written on transitions only)", statusPushes, window.Round(time.Millisecond))
	}

	// Restart: a new agent, as a new process would be.
	loop1.Stop()
	before := snapshotConfigMaps(t, m, ns)
	var second requestCounter
	store2 := newGitStore(t, gitstore.Options{URL: r.URL})
	a2 := newAgent(t, agentOptions(m.Name), store2, store2, second.wrap(m.Config))
	pushes = r.Server.Pushes()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	again := a2.Once(ctx) // the second agent's first sync
	cancel()
	reads, dry, writes = second.counts()
	statusPushes = r.Server.Pushes() - pushes
	t.Logf("restarted agent, first sync of the unchanged Work: member reads=%d dry-runs=%d writes=%d; status pushes=%d; again=%s",
		reads, dry, len(writes), statusPushes, again)
	if len(writes) > 0 || dry > 0 {
		t.Errorf("restarted agent re-applied an unchanged Work: %d writes %v, %d dry runs; want none", len(writes), writes, dry)
	}
	if after := snapshotConfigMaps(t, m, ns); !maps.Equal(before, after) {
		t.Errorf("objects changed across the restart:\nbefore %v\nafter  %v", before, after)
	}
	st := waitStatus(t, reader, m.Name, "rev1 still applied and Ready", appliedReady(rev1))
	if st.AgentVersion != agentVersion {
		t.Errorf("status after restart: agentVersion %q, want %q", st.AgentVersion, agentVersion)
	}

	// Status continues: the restarted agent applies the next commit,
	// writing only the object that changed.
	startLoop(t, "second agent", a2.Run)
	second.reset()
	f.write("cm-03.yaml", configMapYAML(ns, "cm-03", "v2"))
	rev2 := f.CommitPush("cm-03 v2")
	eventually(t, converge, configMapValue(m, ns, "cm-03", "v2"))
	waitStatus(t, reader, m.Name, "rev2 applied and Ready", appliedReady(rev2))
	reads, dry, writes = second.counts()
	t.Logf("restarted agent applying rev2 (1 of %d objects changed): member reads=%d dry-runs=%d writes=%v", objects, reads, dry, writes)
	if len(writes) != 1 {
		t.Errorf("applying one changed object wrote %d times: %v; want exactly one write", len(writes), writes)
	}
}

// perMinute converts a count over d to a rate per minute.
func perMinute(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Minutes()
}

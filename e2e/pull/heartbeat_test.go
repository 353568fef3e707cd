package pull

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
)

// TestPullCRStoreHeartbeat: Works live as Work custom resources on a hub
// (a third member). The pull member's agent reads its Work CR, applies it,
// and writes status, its cluster's state and a heartbeat to the Work's
// status, a heartbeat-only write at most once per heartbeat interval. When
// the agent stops, the controller marks the member not Ready once the
// heartbeat is older than PullHeartbeatTimeout: Ready=Unknown, the
// cluster.karmada.io/unreachable:NoSchedule taint, so a template added
// meanwhile goes to the push member only, while what the pull member
// already runs stays in its Work (Karmada does not evict for a NoSchedule
// taint). When an agent returns, the member is Ready again and receives
// the new template.
func TestPullCRStoreHeartbeat(t *testing.T) {
	const (
		heartbeatInterval = time.Second
		heartbeatTimeout  = 5 * time.Second
	)
	env := testenv.Start(t, testenv.Options{Members: 3})
	hub, pullM, pushM := env.Members[0], env.Members[1], env.Members[2]
	hubNS := randomName("propagit")
	e2etest.StartHub(t, hub, converge, pollEvery, hubNS)
	r := e2etest.HTTPRemote(t)
	ns := randomName("heartbeat")
	names := []string{pullM.Name, pushM.Name}
	values := []string{"pulled-by-" + pullM.Name, "pushed-to-" + pushM.Name}

	f := newFleet(t, r.URL)
	f.write("clusters/"+pullM.Name+".yaml", e2etest.ClusterYAML(pullM.Name, clusterv1alpha1.SyncModePull))
	f.write("clusters/"+pushM.Name+".yaml", e2etest.ClusterYAML(pushM.Name, clusterv1alpha1.SyncModePush))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, names...))
	f.write("override.yaml", configMapOverrideYAML(ns, "app", names, values))
	f.write("app.yaml", configMapYAML(ns, "app", "template"))
	rev1 := f.CommitPush("app on a pull and a push member")

	hubStore := crstore.New(e2etest.HubClient(t, hub.Config), hubNS)
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := controllerOptions()
	opts.PullHeartbeatTimeout = heartbeatTimeout
	opts.Metrics = rec
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Push: []*testenv.Member{pushM}, Options: opts})

	// The agent reaches only the hub (its own namespace) and its member.
	var hubCalls requestCounter
	startAgentOnHub := func(what string) *e2etest.Loop {
		store := crstore.New(e2etest.HubClient(t, hubCalls.wrap(hub.Config)), hubNS, crstore.WithHeartbeatInterval(heartbeatInterval))
		aopts := agentOptions(pullM.Name)
		aopts.ProbeInterval = 500 * time.Millisecond
		return startLoop(t, what, newAgent(t, aopts, store, store, pullM.Config).Run)
	}
	agentLoop := startAgentOnHub("agent")
	c.waitRevision(t, rev1)
	eventually(t, converge, all(
		configMapValue(pullM, ns, "app", values[0]),
		configMapValue(pushM, ns, "app", values[1]),
	))
	st := waitStatus(t, hubStore, pullM.Name, "rev1 applied, Ready, with cluster state and heartbeat", func(st *workv1alpha1.WorkStatus) bool {
		return appliedReady(rev1)(st) && st.Heartbeat != nil && st.Cluster != nil
	})
	if st.AgentVersion != agentVersion {
		t.Errorf("Work status of %s: agentVersion %q, want %q", pullM.Name, st.AgentVersion, agentVersion)
	}
	eventually(t, converge, readyIs(reg, pullM.Name, "True"))

	// The heartbeat moves while the agent runs, written at most once per
	// heartbeat interval.
	first := st.Heartbeat.Time
	hubCalls.reset()
	began := time.Now()
	waitStatus(t, hubStore, pullM.Name, fmt.Sprintf("heartbeat later than %s", first.Format(time.RFC3339)), func(st *workv1alpha1.WorkStatus) bool {
		return st.Heartbeat != nil && st.Heartbeat.After(first.Add(2*heartbeatInterval))
	})
	window := time.Since(began)
	_, _, writes := hubCalls.counts()
	t.Logf("agent on the hub: %d status writes in %s (%.0f/min; heartbeat interval %s): %v",
		len(writes), window.Round(time.Millisecond), perMinute(int64(len(writes)), window), heartbeatInterval, writes)
	if limit := int(window/heartbeatInterval) + 2; len(writes) > limit {
		t.Errorf("%d status writes in %s, want at most %d (one per heartbeat interval)", len(writes), window.Round(time.Millisecond), limit)
	}
	memberNS, err := workv1alpha1.MemberNamespace(pullM.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if !strings.HasPrefix(w, "PUT ") || !strings.HasSuffix(w, "/namespaces/"+memberNS+"/works/"+pullM.Name+"/status") {
			t.Errorf("agent wrote %s on the hub; want only its own Work's status", w)
		}
	}

	// The agent stops: the heartbeat goes stale and the member is not Ready.
	agentLoop.Stop()
	stopped := time.Now()
	eventually(t, converge, readyIs(reg, pullM.Name, "Unknown"))
	t.Logf("pull member Ready=Unknown %s after its agent stopped (timeout %s)", time.Since(stopped).Round(time.Millisecond), heartbeatTimeout)

	// A template added now goes to the push member only; the pull member
	// keeps what it had in its Work.
	f.write("late.yaml", configMapYAML(ns, "late", "added while the agent was away"))
	rev2 := f.CommitPush("late config")
	c.waitRevision(t, rev2)
	eventually(t, converge, configMapValue(pushM, ns, "late", "added while the agent was away"))
	eventually(t, converge, workHolds(hubStore, pushM.Name, "ConfigMap/app", "ConfigMap/late"))
	got, err := workObjects(hubStore, pullM.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "ConfigMap/app") || slices.Contains(got, "ConfigMap/late") {
		t.Errorf("Work of %s while its heartbeat is stale: %v; want ConfigMap/app kept and no ConfigMap/late", pullM.Name, got)
	}
	if ok, msg := readyIs(reg, pullM.Name, "Unknown")(); !ok {
		t.Error(msg)
	}

	// An agent returns: Ready again, and the template reaches the member.
	startAgentOnHub("restarted agent")
	returned := time.Now()
	eventually(t, converge, readyIs(reg, pullM.Name, "True"))
	eventually(t, converge, workHolds(hubStore, pullM.Name, "ConfigMap/app", "ConfigMap/late"))
	eventually(t, converge, configMapValue(pullM, ns, "late", "added while the agent was away"))
	waitStatus(t, hubStore, pullM.Name, "rev2 applied and Ready", appliedReady(rev2))
	t.Logf("agent back: member Ready, late template applied and reported in %s", time.Since(returned).Round(time.Millisecond))
}

// readyIs is an eventually condition on the controller's
// propagit_cluster_ready_condition metric.
func readyIs(reg *prometheus.Registry, cluster, want string) func() (bool, string) {
	return func() (bool, string) {
		got, err := clusterReady(reg, cluster)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("cluster %s Ready=%q, want %q", cluster, got, want)
	}
}

// workHolds is an eventually condition: cluster's Work holds exactly want
// (kind/name), besides its Namespace.
func workHolds(store agent.Source, cluster string, want ...string) func() (bool, string) {
	return func() (bool, string) {
		got, err := workObjects(store, cluster)
		if err != nil {
			return false, err.Error()
		}
		got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "Namespace/") })
		return slices.Equal(got, want), fmt.Sprintf("Work of %s holds %v, want %v", cluster, got, want)
	}
}

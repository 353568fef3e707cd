package pull

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
)

// failoverPolicyYAML sends every ConfigMap of ns to cluster, tolerating the
// unreachable NoExecute taint for tolerate, then evicting directly
// (Karmada's taint-based cluster failover).
func failoverPolicyYAML(ns, cluster string, tolerate time.Duration) string {
	return e2etest.Policy{Namespace: ns, Clusters: []string{cluster}, Scheduling: "Duplicated", PurgeDirectly: true,
		Tolerate: []string{"cluster.karmada.io/unreachable"}, TolerateFor: tolerate}.YAML()
}

// TestPullStaleHeartbeatFailover: a pull member whose agent stopped is not
// Ready once its heartbeat is older than PullHeartbeatTimeout, and a policy
// with cluster failover moves its templates off the member once the
// unreachable taint has lasted longer than the policy tolerates — counted
// from when the heartbeat went stale, not from the controller's last look.
func TestPullStaleHeartbeatFailover(t *testing.T) {
	const (
		heartbeatTimeout = 4 * time.Second
		tolerate         = 3 * time.Second
	)
	env := testenv.Start(t, testenv.Options{Members: 2})
	hub, pullM := env.Members[0], env.Members[1]
	hubNS := randomName("propagit")
	e2etest.StartHub(t, hub, converge, pollEvery, hubNS)
	r := e2etest.HTTPRemote(t)
	ns := randomName("failover")

	f := newFleet(t, r.URL)
	f.write("clusters/"+pullM.Name+".yaml", e2etest.ClusterYAML(pullM.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", failoverPolicyYAML(ns, pullM.Name, tolerate))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	rev := f.CommitPush("app on a pull member with cluster failover")

	hubStore := crstore.New(e2etest.HubClient(t, hub.Config), hubNS)
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := controllerOptions()
	opts.PullHeartbeatTimeout = heartbeatTimeout
	opts.Metrics = rec
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Options: opts})
	agentStore := crstore.New(e2etest.HubClient(t, hub.Config), hubNS, crstore.WithHeartbeatInterval(time.Second))
	agentLoop := startLoop(t, "agent", newAgent(t, agentOptions(pullM.Name), agentStore, agentStore, pullM.Config).Run)
	c.waitRevision(t, rev)
	eventually(t, converge, configMapValue(pullM, ns, "app", "v1"))
	waitStatus(t, hubStore, pullM.Name, "applied and Ready", appliedReady(rev))
	eventually(t, converge, readyIs(reg, pullM.Name, "True"))

	agentLoop.Stop()
	stopped := time.Now()
	eventually(t, converge, readyIs(reg, pullM.Name, "Unknown"))
	t.Logf("Ready=Unknown %s after the agent stopped", time.Since(stopped).Round(time.Millisecond))
	// Stale after at most heartbeatTimeout (plus the heartbeat's
	// one-second precision), evicted tolerate later: allow a few
	// reconcile passes on top.
	deadline := heartbeatTimeout + tolerate + 15*time.Second
	eventually(t, deadline, workHolds(hubStore, pullM.Name))
	t.Logf("templates moved off the pull member %s after the agent stopped (heartbeat timeout %s, toleration %s)",
		time.Since(stopped).Round(time.Millisecond), heartbeatTimeout, tolerate)
}

package pull

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// TestPullGitStoreHeartbeat: with the Git store, an agent that has nothing
// new to report still moves its heartbeat ref once per heartbeat interval,
// so the controller tells a live agent from a dead one: Ready while it
// runs, Unknown once it stops for longer than PullHeartbeatTimeout, Ready
// again when it returns. Heartbeats never add status commits.
func TestPullGitStoreHeartbeat(t *testing.T) {
	const (
		heartbeatInterval = time.Second
		heartbeatTimeout  = 5 * time.Second
	)
	env := testenv.Start(t, testenv.Options{Members: 1})
	pullM := env.Members[0]
	r := e2etest.HTTPRemote(t)
	ns := randomName("gitbeat")
	f := newFleet(t, r.URL)
	f.write("clusters/"+pullM.Name+".yaml", e2etest.ClusterYAML(pullM.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, pullM.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	rev := f.CommitPush("app on a pull member, git store")

	controllerStore := newGitStore(t, gitstore.Options{URL: r.URL})
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := controllerOptions()
	opts.PullHeartbeatTimeout = heartbeatTimeout
	opts.Metrics = rec
	c := startController(t, hubSetup{SourceURL: r.URL, Works: controllerStore, Status: controllerStore, Options: opts})
	startAgent := func(what string) *e2etest.Loop {
		store := newGitStore(t, gitstore.Options{URL: r.URL, HeartbeatInterval: heartbeatInterval})
		return startLoop(t, what, newAgent(t, agentOptions(pullM.Name), store, store, pullM.Config).Run)
	}
	agentLoop := startAgent("agent")
	c.waitRevision(t, rev)
	eventually(t, converge, configMapValue(pullM, ns, "app", "v1"))
	eventually(t, converge, readyIs(reg, pullM.Name, "True"))

	// Well past the timeout, the running agent keeps the member Ready.
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
	st, err := reader.GetStatus(t.Context(), pullM.Name)
	if err != nil || st.Heartbeat == nil {
		t.Fatalf("status of %s: %v, heartbeat %v", pullM.Name, err, st)
	}
	first := st.Heartbeat.Time
	eventually(t, converge, func() (bool, string) {
		st, err := reader.GetStatus(t.Context(), pullM.Name)
		if err != nil || st.Heartbeat == nil {
			return false, "no heartbeat"
		}
		return st.Heartbeat.Sub(first) > heartbeatTimeout+time.Second, "heartbeat at " + st.Heartbeat.String()
	})
	if ok, msg := readyIs(reg, pullM.Name, "True")(); !ok {
		t.Fatalf("a live agent on the git store was taken for dead: %s", msg)
	}

	agentLoop.Stop()
	stopped := time.Now()
	eventually(t, converge, readyIs(reg, pullM.Name, "Unknown"))
	t.Logf("git store: pull member Ready=Unknown %s after its agent stopped (timeout %s)", time.Since(stopped).Round(time.Millisecond), heartbeatTimeout)

	startAgent("restarted agent")
	eventually(t, converge, readyIs(reg, pullM.Name, "True"))
}

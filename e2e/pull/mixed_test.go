package pull

import (
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
)

// TestPullMixedPushAndPull: member1 is delivered by push (the controller
// applies), member2 and member3 by pull (an agent inside each, reading the
// Git work branch over smart HTTP with the member's own credentials). The
// same application lands everywhere with each cluster's override, each
// agent's applied revision is on its Git status ref, and a second commit
// reaches all three.
func TestPullMixedPushAndPull(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 3})
	push, pull2, pull3 := env.Members[0], env.Members[1], env.Members[2]
	names := []string{push.Name, pull2.Name, pull3.Name}
	values := []string{"pushed-to-" + push.Name, "pulled-by-" + pull2.Name, "pulled-by-" + pull3.Name}
	r := newRemote(t)
	ns := randomName("mixed")

	f := newFleet(t, r.url)
	f.write("clusters/"+push.Name+".yaml", clusterYAML(push.Name, clusterv1alpha1.SyncModePush))
	f.write("clusters/"+pull2.Name+".yaml", clusterYAML(pull2.Name, clusterv1alpha1.SyncModePull))
	f.write("clusters/"+pull3.Name+".yaml", clusterYAML(pull3.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", namespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, names...))
	f.write("override.yaml", overrideYAML(ns, "app", names, values))
	f.write("app.yaml", configMapYAML(ns, "app", "template"))
	f.write("shared.yaml", configMapYAML(ns, "shared", "v1"))
	rev1 := f.commitPush("app and shared config on three members")

	hubStore := newGitStore(t, works.GitOptions{URL: r.url, CacheDir: t.TempDir()})
	c := startController(t, hubSetup{SourceURL: r.url, Works: hubStore, Status: hubStore,
		Push: []*testenv.Member{push}, Options: controllerOptions()})
	for _, m := range []*testenv.Member{pull2, pull3} {
		// Each agent is its own process: its own store instance, its own
		// member's credentials, nothing of the hub's.
		store := newGitStore(t, works.GitOptions{URL: r.url})
		a := newAgent(t, agentOptions(m.Name), store, store, m.Config)
		startLoop(t, "agent "+m.Name, a.Run)
	}

	start := time.Now()
	c.waitRevision(t, rev1)
	eventually(t, converge, all(
		configMapValue(push, ns, "app", values[0]),
		configMapValue(pull2, ns, "app", values[1]),
		configMapValue(pull3, ns, "app", values[2]),
		configMapValue(push, ns, "shared", "v1"),
		configMapValue(pull2, ns, "shared", "v1"),
		configMapValue(pull3, ns, "shared", "v1"),
	))
	t.Logf("commit to applied on all three members: %s", time.Since(start).Round(time.Millisecond))

	// The Works name each cluster's mode; the pull ones are on the work
	// branch for their agents.
	reader := newGitStore(t, works.GitOptions{URL: r.url})
	ctx, cancel := kubeCtx()
	ws, err := reader.List(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, w := range ws {
		modes[w.Spec.Cluster] = w.Spec.SyncMode
	}
	wantModes := map[string]string{push.Name: "Push", pull2.Name: "Pull", pull3.Name: "Pull"}
	for name, want := range wantModes {
		if modes[name] != want {
			t.Errorf("Work of %s: syncMode %q, want %q (all: %v)", name, modes[name], want, modes)
		}
	}

	// Every member's status ref says rev1 was applied; the pull ones were
	// written by their agents, with the cluster state they measured.
	for _, name := range names {
		st := waitStatus(t, reader, name, "rev1 applied and Ready", appliedReady(rev1))
		msg, err := statusMessage(r.dir, name)
		if err != nil {
			t.Fatalf("status ref of %s: %v", name, err)
		}
		if !strings.Contains(msg, "Applied-Revision: "+rev1) {
			t.Errorf("status ref of %s: commit message %q does not name Applied-Revision %s", name, msg, rev1)
		}
		if name == push.Name {
			continue
		}
		if st.AgentVersion != agentVersion {
			t.Errorf("status of %s: agentVersion %q, want %q", name, st.AgentVersion, agentVersion)
		}
		if st.Cluster == nil || st.Heartbeat == nil {
			t.Errorf("status of %s: no cluster state or heartbeat from the agent: %s", name, describe(st))
		}
	}

	// A second commit reaches every member, whichever way it is delivered.
	f.write("shared.yaml", configMapYAML(ns, "shared", "v2"))
	rev2 := f.commitPush("shared config v2")
	start = time.Now()
	eventually(t, converge, all(
		configMapValue(push, ns, "shared", "v2"),
		configMapValue(pull2, ns, "shared", "v2"),
		configMapValue(pull3, ns, "shared", "v2"),
		configMapValue(pull3, ns, "app", values[2]),
	))
	t.Logf("second commit to applied on all three members: %s", time.Since(start).Round(time.Millisecond))
	for _, name := range names {
		waitStatus(t, reader, name, "rev2 applied and Ready", appliedReady(rev2))
		msg, err := statusMessage(r.dir, name)
		if err != nil || !strings.Contains(msg, "Applied-Revision: "+rev2) {
			t.Errorf("status ref of %s after rev2: message %q, err %v", name, msg, err)
		}
	}
}

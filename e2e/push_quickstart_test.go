package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// The quickstart example's objects.
const (
	qsNamespace = "demo"
	qsApp       = "nginx"
	qsDeploy    = fleetDir + "/apps/nginx/deployment.yaml"
	qsService   = fleetDir + "/apps/nginx/service.yaml"
	qsOverride  = fleetDir + "/policies/nginx-override.yaml"
	qsPolicy    = fleetDir + "/policies/nginx-propagation.yaml"
)

// TestPushQuickstart pushes examples/quickstart over smart HTTP to two
// members that run workloads, then changes and deletes templates, and
// checks the members, the stored status (applied and healthy) and an object
// made by hand.
func TestPushQuickstart(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	remote := e2etest.HTTPRemote(t)
	runQuickstart(t, quickstart{remote: remote, members: env.Members, setup: newSetup(t, remote, env.Members...),
		status: newStatusReader(t, remote), healthy: true})
}

// TestPushFileRemote is the quickstart over a file:// URL, without
// workloads (health is not checked).
func TestPushFileRemote(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2) // the only test of the pool in namespace demo
	remote := e2etest.FileRemote(t)
	runQuickstart(t, quickstart{remote: remote, members: members, setup: newSetup(t, remote, members...),
		status: newStatusReader(t, remote)})
}

// quickstart is one run of the quickstart scenario.
type quickstart struct {
	remote *e2etest.Remote
	// members are member1 and member2.
	members []*testenv.Member
	setup   setup
	status  *statusReader
	// healthy: the members run workloads, so the status must reach Ready.
	healthy bool
	// prepare, when set, edits the copied fleet before the first commit.
	prepare func(co *e2etest.Checkout)
}

// runQuickstart is the quickstart scenario: it lands with the override, a
// replicas change lands, a template deleted from Git is pruned, a hand-made
// object is never touched, and the status store records each commit as
// applied on both clusters (and healthy when q.healthy is set).
func runQuickstart(t *testing.T, q quickstart) {
	m1, m2 := q.members[0], q.members[1]
	status := q.status
	co := newCheckout(t, q.remote)
	co.CopyDir(quickstartDir, fleetDir)
	if q.prepare != nil {
		q.prepare(co)
	}
	rev1 := co.CommitPush("quickstart")
	started := time.Now()
	ctrl := startController(t, q.setup)

	// The namespace comes first; a person then adds a ConfigMap by hand.
	var hand []*handmade
	for _, m := range q.members {
		eventually(t, converge, func() (bool, string) {
			ns, err := getNamespace(m, qsNamespace)
			return err == nil && ns != nil, fmt.Sprintf("%s: namespace %s: %v", m.Name, qsNamespace, err)
		})
		hand = append(hand, createHandmade(t, m, qsNamespace, "handmade"))
	}
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, qsNamespace, qsApp, 2) },
		func() (bool, string) { return replicasIs(m2, qsNamespace, qsApp, 3) },
		serviceExists(m1, true), serviceExists(m2, true)))
	t.Logf("timing: first revision %s applied on both members %s after the controller started",
		e2etest.Short(rev1), time.Since(started).Round(time.Millisecond))
	status.waitApplied(rev1, m1.Name, m2.Name)
	checkQuickstartObjects(t, q.members)
	deployUIDs := deploymentUIDs(t, q.members)
	for _, h := range hand {
		h.check(t, "after the first revision")
	}

	// A commit changing replicas: the template and the override.
	co.Edit(qsDeploy, "replicas: 2", "replicas: 4")
	co.Edit(qsOverride, "value: 3", "value: 5")
	rev2, pushed := co.CommitPush("nginx: 4 replicas, 5 on member2"), time.Now()
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, qsNamespace, qsApp, 4) },
		func() (bool, string) { return replicasIs(m2, qsNamespace, qsApp, 5) }))
	t.Logf("timing: replicas change %s applied on both members %s after the push", e2etest.Short(rev2), time.Since(pushed).Round(time.Millisecond))
	status.waitApplied(rev2, m1.Name, m2.Name)
	for _, h := range hand {
		h.check(t, "after the replicas change")
	}

	// A template deleted from Git is pruned from both members.
	co.Remove(qsService)
	rev3, pushed := co.CommitPush("nginx: no Service"), time.Now()
	eventually(t, converge, both(serviceExists(m1, false), serviceExists(m2, false)))
	t.Logf("timing: Service deletion %s pruned from both members %s after the push", e2etest.Short(rev3), time.Since(pushed).Round(time.Millisecond))
	sts := status.waitApplied(rev3, m1.Name, m2.Name)
	for name, st := range sts {
		for _, r := range st.Inventory {
			if r.Kind == "Service" {
				t.Errorf("%s: inventory still lists %s/%s/%s after it was pruned", name, r.Kind, r.Namespace, r.Name)
			}
		}
	}
	if got := deploymentUIDs(t, q.members); fmt.Sprint(got) != fmt.Sprint(deployUIDs) {
		t.Errorf("Deployments were recreated: UIDs %v, were %v", got, deployUIDs)
	}
	for _, m := range q.members {
		if ns, err := getNamespace(m, qsNamespace); err != nil || ns == nil {
			t.Errorf("%s: namespace %s gone after pruning the Service (err %v)", m.Name, qsNamespace, err)
		}
	}
	for _, h := range hand {
		h.check(t, "after the Service was pruned")
	}
	if st := ctrl.State(); st.Revision != rev3 || st.SourceError != "" {
		t.Errorf("controller state %+v, want revision %s and no error", st, rev3)
	}
	checkWorksRecorded(t, status, rev3, m1.Name, m2.Name)
	if q.healthy {
		waitHealthy(t, status, rev3, m1.Name, m2.Name)
		// Ready must mean running: the Deployments are available.
		for _, m := range q.members {
			d, err := getDeployment(m, qsNamespace, qsApp)
			if err != nil || d == nil {
				t.Fatalf("%s: Deployment: %v", m.Name, err)
			}
			if d.Status.AvailableReplicas != *d.Spec.Replicas {
				t.Errorf("%s: status says Ready but Deployment has %d of %d replicas available", m.Name, d.Status.AvailableReplicas, *d.Spec.Replicas)
			}
		}
	}
}

// serviceExists reports whether Service demo/nginx exists (want true) or
// is gone (want false) on m.
func serviceExists(m *testenv.Member, want bool) func() (bool, string) {
	return func() (bool, string) {
		s, err := getService(m, qsNamespace, qsApp)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", m.Name, err)
		}
		if (s != nil) != want {
			return false, fmt.Sprintf("%s: Service %s/%s exists=%v, want %v", m.Name, qsNamespace, qsApp, s != nil, want)
		}
		return true, ""
	}
}

// checkQuickstartObjects checks that everything propagit applied carries
// its label and template annotation, and that the override reached only
// member2.
func checkQuickstartObjects(t *testing.T, members []*testenv.Member) {
	t.Helper()
	for _, m := range members {
		d, err := getDeployment(m, qsNamespace, qsApp)
		if err != nil || d == nil {
			t.Fatalf("%s: Deployment: %v", m.Name, err)
		}
		checkStamped(t, m.Name+": Deployment", d)
		s, err := getService(m, qsNamespace, qsApp)
		if err != nil || s == nil {
			t.Fatalf("%s: Service: %v", m.Name, err)
		}
		checkStamped(t, m.Name+": Service", s)
		ns, err := getNamespace(m, qsNamespace)
		if err != nil || ns == nil {
			t.Fatalf("%s: Namespace: %v", m.Name, err)
		}
		checkStamped(t, m.Name+": Namespace", ns)
	}
}

// deploymentUIDs returns the UID of Deployment demo/nginx by member.
func deploymentUIDs(t *testing.T, members []*testenv.Member) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range members {
		d, err := getDeployment(m, qsNamespace, qsApp)
		if err != nil || d == nil {
			t.Fatalf("%s: Deployment: %v", m.Name, err)
		}
		out[m.Name] = string(d.UID)
	}
	return out
}

// checkWorksRecorded checks the work branch holds one Work per cluster
// rendered from rev.
func checkWorksRecorded(t *testing.T, status *statusReader, rev string, clusters ...string) {
	t.Helper()
	ws, err := status.works()
	if err != nil {
		t.Fatalf("failed to list the recorded Works: %v", err)
	}
	got := map[string]*workv1alpha1.Work{}
	for _, w := range ws {
		got[w.Spec.Cluster] = w
	}
	for _, c := range clusters {
		w := got[c]
		switch {
		case w == nil:
			t.Errorf("no Work recorded for %s (have %d Works)", c, len(ws))
		case w.Spec.SourceRevision != rev:
			t.Errorf("Work of %s rendered from %s, want %s", c, e2etest.Short(w.Spec.SourceRevision), e2etest.Short(rev))
		}
	}
}

// waitHealthy waits until every cluster's status says rev is applied and
// Ready, with the health of every object still on the member Current.
func waitHealthy(t *testing.T, status *statusReader, rev string, clusters ...string) {
	t.Helper()
	took := eventually(t, converge, func() (bool, string) {
		for _, c := range clusters {
			st, err := status.get(c)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", c, err)
			}
			ready := e2etest.Condition(st, "Ready")
			if st.AppliedRevision != rev || ready == nil || ready.Status != "True" {
				return false, fmt.Sprintf("%s: %s", c, e2etest.DescribeStatus(st))
			}
			for _, o := range st.Objects {
				if o.Action == "Pruned" {
					continue // gone from the member; it has no health
				}
				if o.Health != "Current" {
					return false, fmt.Sprintf("%s: %s %s/%s health %q", c, o.Kind, o.Namespace, o.Name, o.Health)
				}
			}
		}
		return true, ""
	})
	t.Logf("timing: revision %s reported Ready on %v after a further %s", e2etest.Short(rev), clusters, took.Round(time.Millisecond))
}

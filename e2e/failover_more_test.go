package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// failoverLines returns the controller's "failover" log lines.
func failoverLines(r *running) []string {
	var out []string
	for _, l := range r.logs.all() {
		if strings.Contains(l, " failover template=") {
			out = append(out, l)
		}
	}
	return out
}

// TestFailoverDivided divides 9 replicas 2:1:1 over three members (Webster:
// 5/2/2) and stops member3: its replicas move to member1 and member2 per
// their weights 2:1 (6/3), and the total stays 9.
func TestFailoverDivided(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 3})
	m1, m2, m3 := env.Members[0], env.Members[1], env.Members[2]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("failover-div")
	for _, m := range env.Members {
		co.Write(fleetDir+"/clusters/"+m.Name+".yaml", clusterYAML(m.Name))
	}
	co.Write(fleetDir+"/ns.yaml", e2etest.NamespaceYAML(ns))
	co.Write(fleetDir+"/app.yaml", webDeploymentYAML(ns, 9)+fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  propagateDeps: true
  failover:
    cluster: {purgeMode: Directly}
  placement:
    clusterAffinity:
      clusterNames: [%[2]s, %[3]s, %[4]s]
    clusterTolerations:
    - {key: cluster.karmada.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%[2]s]}, weight: 2}
        - {targetCluster: {clusterNames: [%[3]s]}, weight: 1}
        - {targetCluster: {clusterNames: [%[4]s]}, weight: 1}
`, ns, m1.Name, m2.Name, m3.Name))
	co.CommitPush("divided 2:1:1")
	opts := controllerOptions()
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = 2*time.Second, 2*time.Second
	opts.ProbeTimeout = 2 * time.Second
	r := startControllerOpts(t, newSetup(t, remote, m1, m2, m3), opts)

	// Webster over 2:1:1 for 9 replicas: 5/2/2.
	took := eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 5) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 2) },
	))
	t.Logf("initial division 5/2/2 in %s", took.Round(100*time.Millisecond))

	stopping := time.Now()
	if err := m3.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	// 9 over the remaining 2:1: 6/3.
	eventually(t, 5*time.Second+60*time.Second, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 6) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 3) },
	))
	took = time.Since(stopping)
	t.Logf("member3 stopped → replicas 6/3 on member1/member2 in %s (tolerationSeconds 5)", took.Round(100*time.Millisecond))
	if took < 4*time.Second {
		t.Errorf("replicas moved after %s, before tolerationSeconds 5s", took)
	}
	if l, ok := r.logs.find("failover", "from="+m3.Name); !ok {
		t.Errorf("no failover log line from %s; lines: %q", m3.Name, failoverLines(r))
	} else {
		t.Logf("logged: %s", l)
	}
	// Stays 6/3 (total 9) over further passes.
	r.waitPasses(3)
	for _, c := range []struct {
		m    *testenv.Member
		want int32
	}{{m1, 6}, {m2, 3}} {
		if ok, msg := replicasIs(c.m, ns, "web", c.want); !ok {
			t.Errorf("after more passes: %s", msg)
		}
	}
}

// TestFailoverMissedProbe kills the primary's apiserver, waits until the
// controller has seen a probe fail, and starts it again, all within
// ClusterFailureThreshold: the member never turns NotReady, so nothing
// fails over.
func TestFailoverMissedProbe(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	primary, backup := env.Members[0], env.Members[1]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("failover-miss")
	failoverFleet(co, ns, "Immediately", 5, 0)
	co.CommitPush("primary/backup")
	opts := controllerOptions()
	// The outage is a failed probe seen (a pass or two, up to 30 s allowed
	// below) and the restart of kube-apiserver (3–4 s, more when loaded): a
	// threshold of 45 s keeps a margin over both on a machine with both
	// cores busy.
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = 45*time.Second, 2*time.Second
	opts.ProbeTimeout = 2 * time.Second
	r := startControllerOpts(t, newSetup(t, remote, primary, backup), opts)

	waitDeployment(t, primary, ns, true, true, converge)
	r.waitPasses(2)

	seen := len(r.logs.all())
	down := time.Now()
	if err := primary.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if readyzOK(primary) {
		t.Fatal("primary /readyz answers after the kill")
	}
	// The scenario needs the controller to notice the outage; under load a
	// pass may come late, so wait for it rather than hope it fell inside.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, ok := r.logs.findFrom(seen, "member probe failed", "cluster="+primary.Name); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller saw no probe of %s fail in %s after the kill: the scenario does not hold", primary.Name, time.Since(down).Round(100*time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := primary.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	outage := time.Since(down)
	t.Logf("primary /readyz failing for %s (ClusterFailureThreshold %s, tolerationSeconds 5)",
		outage.Round(100*time.Millisecond), opts.ClusterFailureThreshold)
	if outage >= opts.ClusterFailureThreshold {
		t.Fatalf("the outage lasted %s, not shorter than ClusterFailureThreshold: the scenario does not hold", outage)
	}
	r.waitPasses(10)
	t.Logf("%s since the stop", time.Since(down).Round(100*time.Millisecond))

	if exists, _, err := deploymentState(backup, ns); err != nil || exists {
		t.Errorf("the backup runs the application after one missed probe (exists %v, err %v)", exists, err)
	}
	if exists, _, err := deploymentState(primary, ns); err != nil || !exists {
		t.Errorf("the primary lost the application after one missed probe (exists %v, err %v)", exists, err)
	}
	if lines := failoverLines(r); len(lines) > 0 {
		t.Errorf("failover logged after one missed probe: %q", lines)
	}
}

// readyzOK reports whether m's apiserver answers /readyz with ok.
func readyzOK(m *testenv.Member) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	body, err := m.Client().Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
	return err == nil && strings.TrimSpace(string(body)) == "ok"
}

// evictedAt returns the evicted-at annotation of Deployment ns/web in the
// Work of cluster, "" when the Work or the object is absent or the object
// carries none.
func evictedAt(t *testing.T, status *statusReader, cluster, ns string) (string, bool) {
	t.Helper()
	ws, err := status.works()
	if err != nil {
		t.Fatalf("failed to read the Works: %v", err)
	}
	for _, w := range ws {
		if w.Spec.Cluster != cluster {
			continue
		}
		objs, err := workv1alpha1.Objects(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "Deployment" && o.GetNamespace() == ns && o.GetName() == "web" {
				return o.GetAnnotations()[workv1alpha1.AnnotationEvictedAt], true
			}
		}
	}
	return "", false
}

// deploymentCount counts the Deployments in ns on m.
func deploymentCount(t *testing.T, m *testenv.Member, ns string) int {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	l, err := m.Client().AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	return len(l.Items)
}

// TestFailoverControllerRestart restarts the controller after a failover
// from a stopped primary: the new controller keeps the application on the
// backup, logs no new failover, and the kept copy in member1's Work carries
// the same eviction time. The purge mode is Never, so the eviction stays
// pending across the restart (a Gracefully one ends as soon as the backup
// is healthy, which may well be before the restart).
func TestFailoverControllerRestart(t *testing.T) {
	t.Parallel()
	const toleration = 5
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	primary, backup := env.Members[0], env.Members[1]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("failover-restart")
	failoverFleet(co, ns, "Never", toleration, 0)
	rev := co.CommitPush("primary/backup")
	opts := controllerOptions()
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = 2*time.Second, 2*time.Second
	opts.ProbeTimeout = 2 * time.Second
	s := newSetup(t, remote, primary, backup)
	r := startControllerOpts(t, s, opts)
	status := newStatusReader(t, remote)

	waitDeployment(t, primary, ns, true, true, converge)
	stopping := time.Now()
	if err := primary.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, backup, ns, true, true, toleration*time.Second+60*time.Second)
	t.Logf("primary stopped → Available on the backup in %s (tolerationSeconds %d)", time.Since(stopping).Round(100*time.Millisecond), toleration)
	if n := len(failoverLines(r)); n != 1 {
		t.Errorf("first controller logged %d failover lines, want 1: %q", n, failoverLines(r))
	}
	// The eviction is persisted with member1's Work.
	var first string
	eventually(t, converge, func() (bool, string) {
		at, ok := evictedAt(t, status, primary.Name, ns)
		first = at
		return ok && at != "", fmt.Sprintf("member1 Work: Deployment present %v, evicted-at %q", ok, at)
	})
	t.Logf("member1 Work keeps the copy, evicted-at %s", first)

	r.stop()
	r2 := startControllerOpts(t, s, opts)
	// Long enough for the new controller to see the primary NotReady past
	// the threshold and the toleration.
	r2.waitRevision(rev)
	r2.waitPasses(10)

	if lines := failoverLines(r2); len(lines) > 0 {
		t.Errorf("restarted controller repeated the failover: %q", lines)
	}
	if n := deploymentCount(t, backup, ns); n != 1 {
		t.Errorf("backup has %d Deployments, want 1", n)
	}
	if exists, avail, err := deploymentState(backup, ns); err != nil || !exists || !avail {
		t.Errorf("backup lost the application after the restart (exists %v, available %v, err %v)", exists, avail, err)
	}
	at, ok := evictedAt(t, status, primary.Name, ns)
	switch {
	case !ok:
		t.Errorf("member1 Work no longer carries the kept copy after the restart")
	case at != first:
		t.Errorf("member1 Work evicted-at changed across the restart: %q → %q", first, at)
	}

	// The primary returns: the application stays on the backup and
	// member1's Work still holds only the kept copy with the same eviction.
	if err := primary.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	r2.waitPasses(5)
	if n := deploymentCount(t, backup, ns); n != 1 {
		t.Errorf("after the primary returned, backup has %d Deployments, want 1", n)
	}
	if exists, avail, err := deploymentState(backup, ns); err != nil || !exists || !avail {
		t.Errorf("backup lost the application after the primary returned (exists %v, available %v, err %v)", exists, avail, err)
	}
	if at, ok := evictedAt(t, status, primary.Name, ns); !ok || at != first {
		t.Errorf("after the primary returned, member1 Work has the copy %v, evicted-at %q, want %q", ok, at, first)
	}
	if exists, _, err := deploymentState(primary, ns); err != nil || !exists {
		t.Errorf("purge mode Never: the old copy left the primary after its return (err %v)", err)
	}
	if lines := failoverLines(r2); len(lines) > 0 {
		t.Errorf("restarted controller logged a failover: %q", lines)
	}
}

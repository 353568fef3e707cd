package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/testenv"
)

// failoverFleet is a one-replica Deployment on a primary member with a
// backup, failing over after tolerationSeconds with the given purge mode.
func failoverFleet(c *e2etest.Checkout, ns, purge string, tolerationSeconds, graceSeconds int) {
	grace := ""
	if graceSeconds > 0 {
		grace = fmt.Sprintf("      gracePeriodSeconds: %d\n", graceSeconds)
	}
	c.Write(fleetDir+"/clusters/member1.yaml", clusterYAML("member1"))
	c.Write(fleetDir+"/clusters/member2.yaml", clusterYAML("member2"))
	c.Write(fleetDir+"/"+ns+"/ns.yaml", e2etest.NamespaceYAML(ns))
	c.Write(fleetDir+"/"+ns+"/app.yaml", webDeploymentYAML(ns, 1)+fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  propagateDeps: true
  failover:
    application:
      decisionConditions: {tolerationSeconds: %[2]d}
      purgeMode: %[3]s
%[4]s  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [member1]
    - affinityName: backup
      clusterNames: [member2]
`, ns, tolerationSeconds, purge, grace))
}

// webDeploymentYAML is the one-container Deployment ns/web the failover
// scenarios move around.
func webDeploymentYAML(ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
---
`, ns, replicas)
}

// deploymentState reports whether Deployment ns/web exists on m and is
// Available.
func deploymentState(m *testenv.Member, ns string) (exists, available bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := m.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == "True" {
			return true, d.Status.AvailableReplicas >= 1, nil
		}
	}
	return true, false, nil
}

func waitDeployment(t *testing.T, m *testenv.Member, ns string, wantExists, wantAvailable bool, timeout time.Duration) time.Duration {
	t.Helper()
	return eventually(t, timeout, func() (bool, string) {
		exists, available, err := deploymentState(m, ns)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", m.Name, err)
		}
		ok := exists == wantExists && (!wantAvailable || available)
		return ok, fmt.Sprintf("%s: exists=%v available=%v", m.Name, exists, available)
	})
}

// notReadySince reads, from the controller's failover log line, since when
// member was not Ready (the first failed probe, at one-second precision).
func notReadySince(r *running, member string) (time.Time, bool) {
	l, ok := r.logs.find("failover", "from="+member)
	_, after, found := strings.Cut(l, "not Ready since ")
	if !ok || !found {
		return time.Time{}, false
	}
	since, err := time.Parse(time.RFC3339, strings.Fields(after)[0])
	return since, err == nil
}

// checkClusterRow waits until `propagit status` shows member with the
// given Ready condition and exactly the given taints.
func checkClusterRow(t *testing.T, reader *statusReader, member, ready string, taints ...string) {
	t.Helper()
	eventually(t, converge, func() (bool, string) {
		ws, err := reader.works()
		if err != nil {
			return false, err.Error()
		}
		var inputs []status.Input
		for _, w := range ws {
			st, err := reader.get(w.Spec.Cluster)
			if err != nil {
				return false, err.Error()
			}
			inputs = append(inputs, status.Input{Work: w, Status: st, Mode: w.Spec.SyncMode})
		}
		rep, err := status.Build(inputs, "")
		if err != nil {
			return false, err.Error()
		}
		for _, row := range rep.Clusters {
			if row.Name == member {
				return row.ClusterReady == ready && slices.Equal(row.Taints, taints),
					fmt.Sprintf("%s: cluster ready %q, taints %q", member, row.ClusterReady, row.Taints)
			}
		}
		return false, "no status row for " + member
	})
}

// TestFailoverPrimaryBackup stops the primary's apiserver: after
// tolerationSeconds the application runs Available on the backup; when the
// primary returns, the old copy is handled per the purge mode, and the
// application stays on the backup (clusterAffinities never fall back).
// Graciously, with a grace period far longer than the test, ends the
// eviction as soon as the backup reports healthy, so the old copy goes as
// soon as the primary returns.
//
// The three purge modes are three applications, each in its own namespace
// under its own policy, on one pair of members: one outage shows all
// three, as it would in a fleet that mixes them.
func TestFailoverPrimaryBackup(t *testing.T) {
	t.Parallel()
	const toleration = 10
	type app struct {
		purge     string
		grace     int
		keepsCopy bool // the primary's copy survives its return
		ns        string
	}
	apps := []*app{
		{purge: "Graciously", grace: 600, keepsCopy: false},
		{purge: "Immediately", keepsCopy: false},
		{purge: "Never", keepsCopy: true},
	}
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	primary, backup := env.Members[0], env.Members[1]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	for _, a := range apps {
		a.ns = randomNamespace("failover")
		failoverFleet(co, a.ns, a.purge, toleration, a.grace)
	}
	co.CommitPush("primary/backup, one application per purge mode")
	opts := controllerOptions()
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = 2*time.Second, 2*time.Second
	opts.ProbeTimeout = 2 * time.Second
	r := startControllerOpts(t, newSetup(t, remote, primary, backup), opts)
	reader := newStatusReader(t, remote)

	for _, a := range apps {
		waitDeployment(t, primary, a.ns, true, true, converge)
		if exists, _, _ := deploymentState(backup, a.ns); exists {
			t.Fatalf("%s: the backup runs the application while the primary is healthy", a.purge)
		}
	}
	stopping := time.Now()
	if err := primary.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s primary apiserver killed", stopping.Format("15:04:05.000"))
	for _, a := range apps {
		waitDeployment(t, backup, a.ns, true, true, toleration*time.Second+60*time.Second)
		took := time.Since(stopping)
		t.Logf("%s: primary stopped → Available on the backup in %s (tolerationSeconds %d)", a.purge, took.Round(100*time.Millisecond), toleration)
		if took < toleration*time.Second-time.Second {
			t.Errorf("%s: failed over after %s, before tolerationSeconds %ds", a.purge, took, toleration)
		}
		if limit := toleration*time.Second + 5*time.Second; took > limit {
			t.Errorf("%s: failed over after %s, later than tolerationSeconds + 5 s (%s), the bound the issue sets", a.purge, took, limit)
		}
	}
	if since, ok := notReadySince(r, primary.Name); ok {
		t.Logf("primary stopped → first failed probe in %s, NotReady after ClusterFailureThreshold %s more",
			since.Sub(stopping.Truncate(time.Second)), opts.ClusterFailureThreshold)
	}
	checkClusterRow(t, reader, primary.Name, "Unknown", clusterv1alpha1.TaintUnreachable+":NoSchedule", clusterv1alpha1.TaintUnreachable+":NoExecute")
	for _, a := range apps {
		if a.grace == 0 {
			continue
		}
		ended := eventually(t, converge, func() (bool, string) {
			_, ok := r.logs.find("eviction ended", a.ns, "from="+primary.Name, "reason="+render.EndedHealthy)
			return ok, "no \"eviction ended\" log line for " + a.ns
		})
		t.Logf("%s: backup Available → eviction ended (backup healthy) in %s, grace period %ds", a.purge, ended.Round(100*time.Millisecond), a.grace)
	}
	if err := primary.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		if !a.keepsCopy {
			took := waitDeployment(t, primary, a.ns, false, false, converge)
			t.Logf("%s: primary back → old copy removed in %s", a.purge, took.Round(100*time.Millisecond))
		}
	}
	// Never: the old copy stays, however many passes run (the other modes'
	// copies are gone by now, so the passes have run with the primary back).
	for _, a := range apps {
		if a.keepsCopy {
			waitDeployment(t, primary, a.ns, true, false, converge)
		}
	}
	r.waitPasses(5)
	for _, a := range apps {
		if exists, _, err := deploymentState(primary, a.ns); a.keepsCopy && (err != nil || !exists) {
			t.Errorf("purge mode %s removed the old copy (err %v)", a.purge, err)
		}
	}
	checkClusterRow(t, reader, primary.Name, "True")
	// No flap back: the backup keeps every application.
	for _, a := range apps {
		waitDeployment(t, backup, a.ns, true, true, converge)
	}
}

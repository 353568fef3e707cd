package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestKarmadaApplicationFailover runs a one-replica Deployment on a primary
// member with a backup, under a policy with application failover. The
// primary stays Ready, but its node is cordoned and the application's pod
// deleted: the replacement pod cannot be scheduled, the Deployment turns
// unavailable there, and after tolerationSeconds the application runs on
// the backup, while the primary's copy goes (purge mode Directly).
func TestKarmadaApplicationFailover(t *testing.T) {
	t.Parallel()
	const toleration = 5
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	primary, backup := env.Members[0], env.Members[1]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("appfail")
	failoverFleet(co, ns, "Directly", toleration, 0)
	co.CommitPush("application failover")
	r := startControllerOpts(t, newSetup(t, remote, primary, backup), controllerOptions())

	waitDeployment(t, primary, ns, true, true, converge)
	if exists, _, _ := deploymentState(backup, ns); exists {
		t.Fatal("the backup runs the application while it is healthy on the primary")
	}
	// The primary reports it healthy, and the controller has read that
	// report: the unhealthy clock starts from the break, not the rollout.
	reader := newStatusReader(t, remote)
	eventually(t, converge, func() (bool, string) {
		st, err := reader.get(primary.Name)
		if err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady), e2etest.DescribeStatus(st)
	})
	r.waitPasses(2)
	breaking := time.Now()
	breakApplication(t, primary, ns)
	waitDeployment(t, backup, ns, true, true, toleration*time.Second+converge)
	took := time.Since(breaking)
	t.Logf("application broken on the primary → Available on the backup in %s (tolerationSeconds %d)", took.Round(100*time.Millisecond), toleration)
	if took < toleration*time.Second {
		t.Errorf("moved after %s, before tolerationSeconds %ds", took, toleration)
	}
	line, ok := r.logs.find("failover", "from="+primary.Name)
	_, after, found := strings.Cut(line, "application unhealthy on "+primary.Name+" since ")
	if !ok || !found {
		t.Fatalf("no application failover log line for %s: %q", primary.Name, line)
	}
	if since, err := time.Parse(time.RFC3339, strings.Fields(after)[0]); err != nil || since.Before(breaking.Truncate(time.Second)) {
		t.Errorf("unhealthy since %s (err %v), before the application was broken at %s", since, err, breaking.Format(time.RFC3339))
	}
	// Directly: the primary's copy is removed although the primary is Ready.
	waitDeployment(t, primary, ns, false, false, converge)
	// The primary is healthy again (uncordoned): the application stays on
	// the backup, as Karmada's clusterAffinities never fall back.
	setUnschedulable(t, primary, false)
	r.waitPasses(5)
	if exists, _, err := deploymentState(primary, ns); err != nil || exists {
		t.Errorf("the application came back to the primary (exists %v, err %v)", exists, err)
	}
	waitDeployment(t, backup, ns, true, true, converge)
}

// breakApplication makes Deployment ns/web unavailable on a Ready member:
// its nodes are cordoned and its pods deleted, so the replacements stay
// Pending.
func breakApplication(t *testing.T, m *testenv.Member, ns string) {
	t.Helper()
	setUnschedulable(t, m, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Client().CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{LabelSelector: "app=web"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, func() (bool, string) {
		pods, err := m.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d pods, none Pending", len(pods.Items))
	})
}

// setUnschedulable cordons (or uncordons) every node of m.
func setUnschedulable(t *testing.T, m *testenv.Member, cordon bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := m.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes of %s: %v (%d)", m.Name, err, len(nodes.Items))
	}
	for _, n := range nodes.Items {
		// kwok writes node status meanwhile: retry a stale resourceVersion.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := m.Client().CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node.Spec.Unschedulable = cordon
			_, err = m.Client().CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

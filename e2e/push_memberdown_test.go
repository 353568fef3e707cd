package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestPushMemberDownDuringApply stops member2's apiserver and pushes a
// change: member1 gets it and member2's status says it is not ready; once
// member2's apiserver is back it converges, without duplicates and without
// recreating anything.
func TestPushMemberDownDuringApply(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	m1, m2 := env.Members[0], env.Members[1]
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.CopyDir(quickstartDir, fleetDir)
	rev1 := co.CommitPush("quickstart")
	ctrl := startController(t, newSetup(t, remote, env.Members...))
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, qsNamespace, qsApp, 2) },
		func() (bool, string) { return replicasIs(m2, qsNamespace, qsApp, 3) }))
	status.waitApplied(rev1, m1.Name, m2.Name)
	before := snapshotQuickstart(t, env.Members)

	if err := m2.StopAPIServer(); err != nil {
		t.Fatalf("failed to stop member2's apiserver: %v", err)
	}
	co.Edit(qsDeploy, "image: nginx:1.27.3", "image: nginx:1.27.4")
	rev2, pushed := co.CommitPush("nginx 1.27.4"), time.Now()
	eventually(t, converge, func() (bool, string) { return imageIs(m1, qsNamespace, qsApp, "nginx:1.27.4") })
	t.Logf("timing: %s applied on member1 %s after the push, with member2 down", e2etest.Short(rev2), time.Since(pushed).Round(time.Millisecond))
	status.waitApplied(rev2, m1.Name)
	eventually(t, converge, func() (bool, string) {
		st, err := status.get(m2.Name)
		if err != nil {
			return false, fmt.Sprintf("member2: %v", err)
		}
		ready := e2etest.Condition(st, "Ready")
		if ready == nil || ready.Status != metav1.ConditionFalse || st.AppliedRevision != rev1 {
			return false, fmt.Sprintf("member2: want Ready=False and %s still applied; %s", e2etest.Short(rev1), e2etest.DescribeStatus(st))
		}
		t.Logf("member2 while down: %s", e2etest.DescribeStatus(st))
		return true, ""
	})
	if st := ctrl.State(); st.Revision != rev2 || st.SourceError != "" {
		t.Errorf("controller state %+v, want %s in force and no source error", st, e2etest.Short(rev2))
	}

	restarted := time.Now()
	if err := m2.StartAPIServer(); err != nil {
		t.Fatalf("failed to restart member2's apiserver: %v", err)
	}
	t.Logf("timing: member2's apiserver restarted in %s", time.Since(restarted).Round(time.Millisecond))
	back := time.Now()
	eventually(t, converge, func() (bool, string) { return imageIs(m2, qsNamespace, qsApp, "nginx:1.27.4") })
	t.Logf("timing: %s applied on member2 %s after its apiserver was back", e2etest.Short(rev2), time.Since(back).Round(time.Millisecond))
	status.waitApplied(rev2, m1.Name, m2.Name)
	checkNoDuplicates(t, m2)
	for _, m := range env.Members {
		d, err := getDeployment(m, qsNamespace, qsApp)
		if err != nil || d == nil {
			t.Fatalf("%s: Deployment: %v", m.Name, err)
		}
		if string(d.UID) != before[m.Name].deployUID || *d.Spec.Replicas != before[m.Name].replicas {
			t.Errorf("%s: Deployment uid %s replicas %d, want uid %s replicas %d", m.Name, d.UID, *d.Spec.Replicas,
				before[m.Name].deployUID, before[m.Name].replicas)
		}
	}
}

// checkNoDuplicates checks m holds exactly one Deployment and one Service
// named nginx, in any namespace, and nothing else propagit manages but the
// namespace.
func checkNoDuplicates(t *testing.T, m *testenv.Member) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	deps, err := m.Client().AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: failed to list Deployments: %v", m.Name, err)
	}
	var names []string
	for _, d := range deps.Items {
		names = append(names, d.Namespace+"/"+d.Name)
	}
	if len(names) != 1 || names[0] != qsNamespace+"/"+qsApp {
		t.Errorf("%s: Deployments %v, want exactly %s/%s", m.Name, names, qsNamespace, qsApp)
	}
	svcs, err := m.Client().CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: labelManaged + "=true"})
	if err != nil {
		t.Fatalf("%s: failed to list Services: %v", m.Name, err)
	}
	names = nil
	for _, s := range svcs.Items {
		names = append(names, s.Namespace+"/"+s.Name)
	}
	if len(names) != 1 || names[0] != qsNamespace+"/"+qsApp {
		t.Errorf("%s: managed Services %v, want exactly %s/%s", m.Name, names, qsNamespace, qsApp)
	}
}

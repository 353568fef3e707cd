package pull

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// quickstartApp is the application of the quickstart example: an nginx
// Deployment and its Service in namespace demo.
const quickstartApp = "../../examples/quickstart/fleet/apps/nginx"

// quickstartFile returns a file of the quickstart app moved to namespace ns.
func quickstartFile(t testing.TB, name, ns string) string {
	t.Helper()
	data, err := os.ReadFile(quickstartApp + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	content := string(data)
	if n := strings.Count(content, "namespace: demo\n"); n != 1 {
		t.Fatalf("%s: want one \"namespace: demo\", found %d", name, n)
	}
	return strings.Replace(content, "namespace: demo\n", "namespace: "+ns+"\n", 1)
}

// appPolicyYAML sends the quickstart app and every ConfigMap of ns to
// clusters, each getting the whole template (Duplicated).
func appPolicyYAML(ns string, clusters ...string) string {
	var names strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&names, "      - %s\n", c)
	}
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: %s
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  - apiVersion: v1
    kind: Service
    name: nginx
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames:
%s    replicaScheduling:
      replicaSchedulingType: Duplicated
`, ns, names.String())
}

// rolledOut is an eventually condition: Deployment ns/name on m runs image
// with want replicas, all updated and available, and is propagit's.
func rolledOut(m *testenv.Member, ns, name, image string, want int32) func() (bool, string) {
	return func() (bool, string) {
		ctx, cancel := kubeCtx()
		defer cancel()
		d, err := m.Client().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("%s: Deployment %s/%s: %v", m.Name, ns, name, err)
		}
		got := fmt.Sprintf("%s: Deployment %s/%s replicas=%v image=%s updated=%d available=%d managed=%q",
			m.Name, ns, name, e2etest.Deref(d.Spec.Replicas), d.Spec.Template.Spec.Containers[0].Image,
			d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Labels["propagit.io/managed"])
		ok := d.Spec.Replicas != nil && *d.Spec.Replicas == want && d.Spec.Template.Spec.Containers[0].Image == image &&
			d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want && d.Status.Replicas == want && d.Labels["propagit.io/managed"] == "true"
		return ok, got + fmt.Sprintf("; want replicas=%d image=%s, all available", want, image)
	}
}

// serviceExists is an eventually condition: Service ns/name on m is
// propagit's.
func serviceExists(m *testenv.Member, ns, name string) func() (bool, string) {
	return func() (bool, string) {
		ctx, cancel := kubeCtx()
		defer cancel()
		s, err := m.Client().CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("%s: Service %s/%s: %v", m.Name, ns, name, err)
		}
		return s.Labels["propagit.io/managed"] == "true", fmt.Sprintf("%s: Service %s/%s labels %v", m.Name, ns, name, s.Labels)
	}
}

// TestPullMixedPushAndPull: member1 is delivered by push (the controller
// applies), member2 and member3 by pull (an agent inside each, reading the
// Git work branch over smart HTTP with the member's own credentials). The
// quickstart application — an nginx Deployment and Service — plus a
// ConfigMap land everywhere with each cluster's overrides (replicas and a
// value per cluster) and roll out on each member; each agent's applied
// revision is on its Git status ref; a second commit (a new image) reaches
// all three.
func TestPullMixedPushAndPull(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 3, Workloads: true})
	push, pull2, pull3 := env.Members[0], env.Members[1], env.Members[2]
	members := []*testenv.Member{push, pull2, pull3}
	names := []string{push.Name, pull2.Name, pull3.Name}
	replicas := []int32{1, 2, 3}
	values := []string{"pushed-to-" + push.Name, "pulled-by-" + pull2.Name, "pulled-by-" + pull3.Name}
	r := e2etest.HTTPRemote(t)
	ns := randomName("mixed")

	f := newFleet(t, r.URL)
	f.write("clusters/"+push.Name+".yaml", e2etest.ClusterYAML(push.Name, clusterv1alpha1.SyncModePush))
	f.write("clusters/"+pull2.Name+".yaml", e2etest.ClusterYAML(pull2.Name, clusterv1alpha1.SyncModePull))
	f.write("clusters/"+pull3.Name+".yaml", e2etest.ClusterYAML(pull3.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("apps/nginx/deployment.yaml", quickstartFile(t, "deployment.yaml", ns))
	f.write("apps/nginx/service.yaml", quickstartFile(t, "service.yaml", ns))
	f.write("apps/nginx/config.yaml", configMapYAML(ns, "app", "template"))
	f.write("policies/propagation.yaml", appPolicyYAML(ns, names...))
	f.write("policies/replicas.yaml", overrideYAML("apps/v1", "Deployment", ns, "nginx", "/spec/replicas", names, []string{"1", "2", "3"}))
	f.write("policies/config.yaml", configMapOverrideYAML(ns, "app", names, values))
	rev1 := f.CommitPush("quickstart app on one push and two pull members")

	hubStore := newGitStore(t, gitstore.Options{URL: r.URL, CacheDir: t.TempDir()})
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore,
		Push: []*testenv.Member{push}, Options: controllerOptions()})
	for _, m := range []*testenv.Member{pull2, pull3} {
		// Each agent is its own process: its own store instance, its own
		// member's credentials, nothing of the hub's.
		store := newGitStore(t, gitstore.Options{URL: r.URL})
		startLoop(t, "agent "+m.Name, newAgent(t, agentOptions(m.Name), store, store, m.Config).Run)
	}

	start := time.Now()
	c.waitRevision(t, rev1)
	var landed []func() (bool, string)
	for i, m := range members {
		landed = append(landed,
			configMapValue(m, ns, "app", values[i]),
			serviceExists(m, ns, "nginx"),
			rolledOut(m, ns, "nginx", "nginx:1.27.3", replicas[i]))
	}
	eventually(t, converge, all(landed...))
	t.Logf("commit to rolled out on all three members: %s", time.Since(start).Round(time.Millisecond))

	// The Works name each cluster's mode.
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
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
	for name, want := range map[string]string{push.Name: "Push", pull2.Name: "Pull", pull3.Name: "Pull"} {
		if modes[name] != want {
			t.Errorf("Work of %s: syncMode %q, want %q (all: %v)", name, modes[name], want, modes)
		}
	}

	// Every member's status ref says rev1 was applied and is healthy; the
	// pull ones were written by their agents, with the cluster state they
	// measured.
	for _, name := range names {
		st := waitStatus(t, reader, name, "rev1 applied and Ready", appliedReady(rev1))
		msg, err := statusMessage(r.Dir, name)
		if err != nil {
			t.Fatalf("status ref of %s: %v", name, err)
		}
		if !strings.Contains(msg, "Applied-Revision: "+rev1) || !strings.Contains(msg, "Ready: True") {
			t.Errorf("status ref of %s: commit message %q, want Applied-Revision %s and Ready: True", name, msg, rev1)
		}
		if name == push.Name {
			continue
		}
		if st.AgentVersion != agentVersion {
			t.Errorf("status of %s: agentVersion %q, want %q", name, st.AgentVersion, agentVersion)
		}
		if st.Cluster == nil || st.Cluster.NodeSummary == nil || st.Cluster.NodeSummary.ReadyNum != 1 || st.Heartbeat == nil {
			t.Errorf("status of %s: want the agent's cluster state (1 ready node) and a heartbeat: %s, cluster %+v", name, e2etest.DescribeStatus(st), st.Cluster)
		}
	}

	// A second commit reaches every member, whichever way it is delivered.
	f.write("apps/nginx/deployment.yaml", strings.Replace(quickstartFile(t, "deployment.yaml", ns), "nginx:1.27.3", "nginx:1.27.4", 1))
	rev2 := f.CommitPush("nginx 1.27.4")
	start = time.Now()
	landed = nil
	for i, m := range members {
		landed = append(landed, rolledOut(m, ns, "nginx", "nginx:1.27.4", replicas[i]), configMapValue(m, ns, "app", values[i]))
	}
	eventually(t, converge, all(landed...))
	t.Logf("second commit to rolled out on all three members: %s", time.Since(start).Round(time.Millisecond))
	for _, name := range names {
		waitStatus(t, reader, name, "rev2 applied and Ready", appliedReady(rev2))
		msg, err := statusMessage(r.Dir, name)
		if err != nil || !strings.Contains(msg, "Applied-Revision: "+rev2) {
			t.Errorf("status ref of %s after rev2: message %q, err %v", name, msg, err)
		}
	}
}

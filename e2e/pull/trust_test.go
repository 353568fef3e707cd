package pull

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cli"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/memberstore"
)

// hubIdentity runs `propagit join NAME --mode pull --hub-kubeconfig` for
// member m, with the hub's and the member's admin kubeconfigs, and returns
// the agent's hub config, built from the kubeconfig in the member Secret
// join wrote (a ServiceAccount token).
func hubIdentity(t *testing.T, hub, m *testenv.Member) *rest.Config {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	root := cli.NewRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"join", m.Name, "--kubeconfig", m.KubeconfigPath, "--mode", "pull",
		"--hub-kubeconfig", hub.KubeconfigPath, "--token-expiration", "1h", "--out", out})
	ctx, cancel := kubeCtx()
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("propagit join %s: %v\n%s", m.Name, err, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, m.Name+"-hub.secret.yaml"))
	if err != nil {
		t.Fatalf("propagit join %s wrote no hub Secret: %v", m.Name, err)
	}
	secret := &corev1.Secret{}
	if err := yaml.UnmarshalStrict(data, secret); err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile(filepath.Join(out, m.Name+"-agent.yaml"))
	if err != nil || !strings.Contains(string(agent), "secretName: "+secret.Name) {
		t.Errorf("the agent Deployment does not mount Secret %s: %v\n%s", secret.Name, err, agent)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["kubeconfig"])
	if err != nil {
		t.Fatalf("the hub kubeconfig of %s: %v", m.Name, err)
	}
	if cfg.BearerToken == "" || cfg.CertData != nil {
		t.Fatalf("the hub kubeconfig of %s holds no ServiceAccount token", m.Name)
	}
	return cfg
}

// controllerRBAC is the controller's hub RBAC for Works, as deployed.
const controllerRBAC = "../../deploy/rbac/works.yaml"

// controllerIdentity applies controllerRBAC to the hub and returns the
// hub's admin config impersonating the ServiceAccount it binds.
func controllerIdentity(t *testing.T, hub *testenv.Member) *rest.Config {
	t.Helper()
	data, err := os.ReadFile(controllerRBAC)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	role, binding := &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}
	if len(docs) != 2 || yaml.UnmarshalStrict([]byte(docs[0]), role) != nil || yaml.UnmarshalStrict([]byte(docs[1]), binding) != nil {
		t.Fatalf("%s: want a ClusterRole and a ClusterRoleBinding", controllerRBAC)
	}
	ctx, cancel := kubeCtx()
	defer cancel()
	rbac := hub.Client().RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := binding.Subjects[0]
	cfg := rest.CopyConfig(hub.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}
	return cfg
}

// twoClusterPolicyYAML sends every ConfigMap of ns to both clusters; a
// cluster unreachable for longer than tolerate is evicted directly.
func twoClusterPolicyYAML(ns, a, b string, tolerate time.Duration) string {
	return e2etest.Policy{Namespace: ns, Clusters: []string{a, b}, Scheduling: "Duplicated", PurgeDirectly: true,
		Tolerate: []string{"cluster.karmada.io/unreachable", "cluster.karmada.io/not-ready"}, TolerateFor: tolerate}.YAML()
}

// wantForbidden fails the test unless err is the apiserver's 403.
func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: error = %v, want 403 Forbidden", what, err)
	}
}

// TestTrustPullCRStoreIsolation: with Works as custom resources, each
// member's Work lives in its own hub namespace, and the identity `propagit
// join --mode pull --hub-kubeconfig` (the CLI, in-process) gives an agent (a ServiceAccount token
// on a real hub apiserver) reads its own Work and writes its own status
// and heartbeat — both agents apply and report through it — and gets 403
// on everything of the other member: its Work, its Work's status (read and
// write), Works in any other namespace, and creating Works.
func TestTrustPullCRStoreIsolation(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 3})
	hub, a, b := env.Members[0], env.Members[1], env.Members[2]
	legacyNS := randomName("propagit")
	e2etest.StartHub(t, hub, converge, pollEvery, legacyNS)
	r := e2etest.HTTPRemote(t)
	ns := randomName("trust")
	f := newFleet(t, r.URL)
	f.write("clusters/"+a.Name+".yaml", e2etest.ClusterYAML(a.Name, clusterv1alpha1.SyncModePull))
	f.write("clusters/"+b.Name+".yaml", e2etest.ClusterYAML(b.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, a.Name, b.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	rev := f.CommitPush("app on two pull members")

	// The controller acts on the hub with deploy/'s RBAC only.
	hubStore := crstore.New(e2etest.HubClient(t, controllerIdentity(t, hub)), legacyNS)
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Options: controllerOptions()})
	cfgA, cfgB := hubIdentity(t, hub, a), hubIdentity(t, hub, b)
	for _, m := range []struct {
		member *testenv.Member
		cfg    *rest.Config
	}{{a, cfgA}, {b, cfgB}} {
		store := crstore.New(e2etest.HubClient(t, m.cfg), "", crstore.WithHeartbeatInterval(time.Second))
		startLoop(t, "agent "+m.member.Name, newAgent(t, agentOptions(m.member.Name), store, store, m.member.Config).Run)
	}
	c.waitRevision(t, rev)
	for _, m := range []*testenv.Member{a, b} {
		eventually(t, converge, configMapValue(m, ns, "app", "v1"))
		waitStatus(t, hubStore, m.Name, "applied and Ready, with a heartbeat, written by its agent", func(st *workv1alpha1.WorkStatus) bool {
			return appliedReady(rev)(st) && st.Heartbeat != nil && st.AgentVersion == agentVersion
		})
	}

	ctx, cancel := kubeCtx()
	defer cancel()
	nsA, _ := workv1alpha1.MemberNamespace(a.Name)
	nsB, _ := workv1alpha1.MemberNamespace(b.Name)
	asA := e2etest.HubClient(t, cfgA)
	own := &workv1alpha1.Work{}
	if err := asA.Get(ctx, client.ObjectKey{Namespace: nsA, Name: a.Name}, own); err != nil {
		t.Fatalf("agent %s reads its own Work: %v", a.Name, err)
	}
	if own.Status.AppliedRevision != rev {
		t.Errorf("agent %s reads its own status: applied %q, want %s", a.Name, own.Status.AppliedRevision, rev)
	}
	wantForbidden(t, "A gets B's Work", asA.Get(ctx, client.ObjectKey{Namespace: nsB, Name: b.Name}, &workv1alpha1.Work{}))
	wantForbidden(t, "A lists B's Works", asA.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(nsB)))
	wantForbidden(t, "A lists Works in every namespace", asA.List(ctx, &workv1alpha1.WorkList{}))
	wantForbidden(t, "A lists Works in the controller's namespace", asA.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(legacyNS)))
	wantForbidden(t, "A reads Secrets in its own namespace", asA.List(ctx, &corev1.SecretList{}, client.InNamespace(nsA)))
	forgedWork := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: nsA}}
	wantForbidden(t, "A creates a Work in its own namespace", asA.Create(ctx, forgedWork))

	// B's status, through the status subresource: neither read nor written.
	dyn, err := dynamic.NewForConfig(cfgA)
	if err != nil {
		t.Fatal(err)
	}
	workRes := dyn.Resource(workv1alpha1.GroupVersion.WithResource("works")).Namespace(nsB)
	_, err = workRes.Get(ctx, b.Name, metav1.GetOptions{}, "status")
	wantForbidden(t, "A gets B's Work status", err)
	forged := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": workv1alpha1.GroupVersion.String(), "kind": "Work",
		"metadata": map[string]any{"name": b.Name, "namespace": nsB},
		"status":   map[string]any{"appliedRevision": "forged"},
	}}
	_, err = workRes.UpdateStatus(ctx, forged, metav1.UpdateOptions{})
	wantForbidden(t, "A updates B's Work status", err)
	agentA := crstore.New(asA, "")
	_, err = agentA.GetStatus(ctx, b.Name)
	wantForbidden(t, "A's store reads B's status", err)
	wantForbidden(t, "A's store writes B's status", agentA.PutStatus(ctx, b.Name, &workv1alpha1.WorkStatus{AppliedRevision: "forged"}))
	if st, err := hubStore.GetStatus(ctx, b.Name); err != nil || st.AppliedRevision != rev {
		t.Errorf("B's status = %+v, %v; want B's own, applied %s", st, err, rev)
	}
}

// lsRemote lists url's refs with auth, as the first step of any fetch.
func lsRemote(url string, auth transport.AuthMethod) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	_, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth})
	return err
}

// TestTrustPullGitStoreIsolation: with --works-repo holding {cluster},
// each member's Works and status live in its own repository on a real
// smart-HTTP server where each agent's account reaches only its own
// repository (as a deploy key does). Agent A cannot fetch B's works
// repository nor the source repository, nor push to B's; a status for B
// forged into A's repository — not Ready, with the newest heartbeat — is
// never read: B's status stays its own, B stays Ready, keeps its Work
// although the policy evicts an unready member after one second, and
// receives the next revision.
func TestTrustPullGitStoreIsolation(t *testing.T) {
	const (
		// Five one-second heartbeats: a git http-backend slowed by a busy
		// machine must not make B look dead.
		heartbeatTimeout = 5 * time.Second
		tolerate         = time.Second
	)
	env := testenv.Start(t, testenv.Options{Members: 2})
	a, b := env.Members[0], env.Members[1]
	ns := randomName("trust")
	repos := startMemberRepos(t, a, b, ns, twoClusterPolicyYAML(ns, a.Name, b.Name, tolerate))
	admin, authA, authB, f, rev1 := repos.admin, repos.authA, repos.authB, repos.fleet, repos.rev1
	sourceURL, tmpl := repos.sourceURL, repos.worksTemplate

	store, err := memberstore.New(tmpl, gitstore.Options{Auth: admin}, testLogger(t, "works"))
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := controllerOptions()
	opts.PullHeartbeatTimeout, opts.Metrics = heartbeatTimeout, rec
	c := startController(t, hubSetup{SourceURL: sourceURL, Auth: admin, Works: store, Status: store, Options: opts})
	for _, m := range []struct {
		member *testenv.Member
		auth   *githttp.BasicAuth
	}{{a, authA}, {b, authB}} {
		own, err := memberstore.ParseRepoTemplate(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		url, err := own.URL(m.member.Name)
		if err != nil {
			t.Fatal(err)
		}
		s := newGitStore(t, gitstore.Options{URL: url, Auth: m.auth, HeartbeatInterval: time.Second})
		startLoop(t, "agent "+m.member.Name, newAgent(t, agentOptions(m.member.Name), s, s, m.member.Config).Run)
	}
	c.waitRevision(t, rev1)
	for _, m := range []*testenv.Member{a, b} {
		eventually(t, converge, configMapValue(m, ns, "app", "v1"))
		waitStatus(t, store, m.Name, "applied and Ready", appliedReady(rev1))
		eventually(t, converge, readyIs(reg, m.Name, "True"))
	}

	// A's account: its own repository only.
	urlB := repos.worksURL(b)
	if err := lsRemote(repos.worksURL(a), authA); err != nil {
		t.Errorf("A lists its own works repository: %v", err)
	}
	for what, url := range map[string]string{"B's works repository": urlB, "the source repository": sourceURL} {
		if err := lsRemote(url, authA); !errors.Is(err, transport.ErrAuthorizationFailed) {
			t.Errorf("A fetches %s: error = %v, want 403 (%v)", what, err, transport.ErrAuthorizationFailed)
		}
	}
	ctx, cancel := kubeCtx()
	defer cancel()
	intoB := newGitStore(t, gitstore.Options{URL: urlB, Auth: authA})
	if w, err := intoB.ListCluster(ctx, b.Name); err == nil {
		t.Errorf("A read B's Work (%v objects) from B's repository", w != nil)
	}
	if err := intoB.PutStatus(ctx, b.Name, &workv1alpha1.WorkStatus{AppliedRevision: "forged"}); !errors.Is(err, transport.ErrAuthorizationFailed) {
		t.Errorf("A writes B's status into B's repository: error = %v, want 403", err)
	}

	// A forges B's status in its own repository: B not Ready, with a
	// heartbeat newer than B's own.
	forgedAt := time.Now()
	fresh := metav1.NewTime(forgedAt.Add(time.Hour))
	forged := &workv1alpha1.WorkStatus{AppliedRevision: "forged", Heartbeat: &fresh,
		Cluster: &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: "Forged", Message: "forged by A", LastTransitionTime: metav1.NewTime(forgedAt)}}}}
	intoA := newGitStore(t, gitstore.Options{URL: repos.worksURL(a), Auth: authA})
	if err := intoA.PutStatus(ctx, b.Name, forged); err != nil {
		t.Fatalf("A writes into its own repository: %v", err)
	}
	// Long enough for the forged status to have made B unready and evicted
	// it, had the controller read it: B's own heartbeat, in B's own
	// repository, moves past that point.
	past := forgedAt.Add(heartbeatTimeout + tolerate + 2*time.Second)
	ownB := newGitStore(t, gitstore.Options{URL: urlB, Auth: authB})
	waitStatus(t, ownB, b.Name, "B's own heartbeat after "+past.Format(time.RFC3339), func(st *workv1alpha1.WorkStatus) bool {
		return st.Heartbeat != nil && st.Heartbeat.After(past)
	})
	st, err := store.GetStatus(ctx, b.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st.AppliedRevision != rev1 || !strings.Contains(e2etest.DescribeStatus(st), "Ready=True") {
		t.Errorf("B's status read by the controller = %s, want B's own (applied %s, Ready)", e2etest.DescribeStatus(st), e2etest.Short(rev1))
	}
	if ok, msg := readyIs(reg, b.Name, "True")(); !ok {
		t.Errorf("B after the forgery: %s", msg)
	}
	if ok, msg := workHolds(store, b.Name, "ConfigMap/app")(); !ok {
		t.Errorf("B's Work after the forgery: %s", msg)
	}
	f.write("app.yaml", configMapYAML(ns, "app", "v2"))
	rev2 := f.CommitPush("v2")
	c.waitRevision(t, rev2)
	eventually(t, converge, all(configMapValue(a, ns, "app", "v2"), configMapValue(b, ns, "app", "v2")))
	waitStatus(t, store, b.Name, "rev2 applied and Ready", appliedReady(rev2))
}

// moveToLegacy puts cluster's Work, status included, back where earlier
// versions kept it: the controller's namespace legacyNS.
func moveToLegacy(t *testing.T, hub client.Client, cluster, legacyNS string) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	memberNS, _ := workv1alpha1.MemberNamespace(cluster)
	w := &workv1alpha1.Work{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: memberNS, Name: cluster}, w); err != nil {
		t.Fatal(err)
	}
	old := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: legacyNS, Labels: w.Labels,
		Annotations: w.Annotations}, Spec: w.Spec}
	if err := hub.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	old.Status = w.Status
	if err := hub.Status().Update(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := hub.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
}

// TestTrustPullCRStoreMovesLegacyWorks: a pull member's Work left in the
// controller's namespace by an earlier version (as it was, status and
// inventory included) is moved to the member's namespace by the next
// controller; the agent, which can read only that namespace, goes on from
// the moved inventory: what the revision keeps stays untouched (same UID,
// never recreated), what it removes is pruned.
func TestTrustPullCRStoreMovesLegacyWorks(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 2})
	hub, a := env.Members[0], env.Members[1]
	legacyNS := randomName("propagit")
	e2etest.StartHub(t, hub, converge, pollEvery, legacyNS)
	admin := e2etest.HubClient(t, hub.Config)
	r := e2etest.HTTPRemote(t)
	ns := randomName("move")
	f := newFleet(t, r.URL)
	f.write("clusters/"+a.Name+".yaml", e2etest.ClusterYAML(a.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, a.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	f.write("extra.yaml", configMapYAML(ns, "extra", "v1"))
	rev1 := f.CommitPush("two ConfigMaps")

	hubStore := crstore.New(admin, legacyNS)
	cfgA := hubIdentity(t, hub, a)
	run := func(what string) (*runningController, *e2etest.Loop) {
		c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Options: controllerOptions()})
		store := crstore.New(e2etest.HubClient(t, cfgA), "", crstore.WithHeartbeatInterval(time.Second))
		return c, startLoop(t, what, newAgent(t, agentOptions(a.Name), store, store, a.Config).Run)
	}
	c, agentLoop := run("agent")
	c.waitRevision(t, rev1)
	eventually(t, converge, all(configMapValue(a, ns, "app", "v1"), configMapValue(a, ns, "extra", "v1")))
	waitStatus(t, hubStore, a.Name, "rev1 applied", appliedReady(rev1))
	app, err := getConfigMap(a, ns, "app")
	if err != nil {
		t.Fatal(err)
	}
	agentLoop.Stop()
	c.Stop()

	moveToLegacy(t, admin, a.Name, legacyNS)
	if err := os.Remove(filepath.Join(f.Dir, fleetPath, "extra.yaml")); err != nil {
		t.Fatal(err)
	}
	rev2 := f.CommitPush("extra removed")
	c, _ = run("agent after the upgrade")
	c.waitRevision(t, rev2)
	waitStatus(t, hubStore, a.Name, "rev2 applied, from the member's namespace", appliedReady(rev2))
	eventually(t, converge, absent(a, ns, "extra"))
	ctx, cancel := kubeCtx()
	defer cancel()
	var left workv1alpha1.WorkList
	if err := admin.List(ctx, &left, client.InNamespace(legacyNS)); err != nil || len(left.Items) != 0 {
		t.Errorf("Works left in the controller's namespace: %d, %v", len(left.Items), err)
	}
	now, err := getConfigMap(a, ns, "app")
	if err != nil || now.UID != app.UID {
		t.Errorf("ConfigMap app after the move: %v; want the same object (UID %s)", err, app.UID)
	}
}

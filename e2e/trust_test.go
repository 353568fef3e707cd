package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/testenv"
)

// Tokens the attacker hopes to receive; none may ever reach the listener or
// the logs.
const (
	trustGitToken   = "controller-git-token-e2e"
	trustLooseToken = "loose-token-e2e"
)

// credentialTrap is an API endpoint under an attacker's control: it records
// every request it receives, and the credential each one carried.
type credentialTrap struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newCredentialTrap(t *testing.T) *credentialTrap {
	trap := &credentialTrap{}
	trap.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trap.mu.Lock()
		defer trap.mu.Unlock()
		trap.requests = append(trap.requests, fmt.Sprintf("%s %s Authorization=%q", r.Method, r.URL.Path, r.Header.Get("Authorization")))
		http.Error(w, "trap", http.StatusForbidden)
	}))
	t.Cleanup(trap.Close)
	return trap
}

func (trap *credentialTrap) received() []string {
	trap.mu.Lock()
	defer trap.mu.Unlock()
	return append([]string(nil), trap.requests...)
}

// putSecret creates Secret ns/name on the hub.
func putSecret(t *testing.T, c client.Client, ns, name string, labels map[string]string, data map[string]string) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, StringData: data}
	if err := c.Create(ctx, s); err != nil {
		t.Fatalf("failed to create Secret %s/%s on the hub: %v", ns, name, err)
	}
}

// joinPush runs `propagit join --mode push` against m, applies the
// credential Secret it renders to the hub, and returns the Cluster to commit.
func joinPush(t *testing.T, hub client.Client, m *testenv.Member) []byte {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := join.DefaultOptions()
	opts.Name, opts.Mode, opts.CheckTimeout = m.Name, join.ModePush, 15*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := join.Join(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("join %s: %v", m.Name, err)
	}
	out, err := join.Render(opts, res)
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := yaml.Unmarshal(out.Secret, &s); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, &s); err != nil {
		t.Fatalf("failed to apply join's Secret %s/%s to the hub: %v", s.Namespace, s.Name, err)
	}
	return out.Cluster
}

// trustCluster is a push Cluster; ref is "namespace/name" or "".
func trustCluster(name, endpoint, ref string) string {
	y := fmt.Sprintf("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\nspec:\n  syncMode: Push\n", name)
	if endpoint != "" {
		y += fmt.Sprintf("  apiEndpoint: %s\n", endpoint)
	}
	if ns, n, ok := strings.Cut(ref, "/"); ok {
		y += fmt.Sprintf("  secretRef:\n    namespace: %s\n    name: %s\n", ns, n)
	}
	return y
}

// TestTrustClusterCannotRedirectCredentials commits Clusters that aim a
// credential at an endpoint the committer controls: the controller's Git
// token in its own namespace, an unlabelled token in the credentials
// namespace, member1's bound credential under another name, and member1's
// own Cluster redirected to another endpoint. None is contacted: the trap
// never receives a request, the probe reports CredentialMismatch naming the
// mismatch, and no token appears in the logs. member1, correctly bound,
// gets its ConfigMap through the Cluster and Secret `propagit join` wrote.
func TestTrustClusterCannotRedirectCredentials(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	m1, hubMember := env.Members[0], env.Members[1]
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	e2etest.CreateNamespace(t, hub, cluster.DefaultNamespace)
	// The controller's own Git token, where it belongs: not in the
	// credentials namespace.
	putSecret(t, hub, hubNS, "propagit-git", nil, map[string]string{"token": trustGitToken})
	putSecret(t, hub, cluster.DefaultNamespace, "loose", nil, map[string]string{"token": trustLooseToken})
	m1Cluster := joinPush(t, hub, m1)
	trap := newCredentialTrap(t)

	ns := randomNamespace("trust")
	attacks := map[string]struct{ ref, mention string }{
		"steal-git":   {hubNS + "/propagit-git", "read only from namespace " + cluster.DefaultNamespace},
		"steal-loose": {cluster.DefaultNamespace + "/loose", "has no " + workv1alpha1.LabelCredentialsFor + " label"},
		"steal-m1":    {cluster.DefaultNamespace + "/" + join.SecretName(m1.Name), workv1alpha1.LabelCredentialsFor + "=" + m1.Name + ", not this cluster"},
	}
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	names := []string{m1.Name}
	co.Write(fleetDir+"/clusters/"+m1.Name+".yaml", string(m1Cluster))
	for name, a := range attacks {
		co.Write(fleetDir+"/clusters/"+name+".yaml", trustCluster(name, trap.URL, a.ref))
		names = append(names, name)
	}
	co.Write(fleetDir+"/app/namespace.yaml", fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns))
	co.Write(fleetDir+"/app/config.yaml", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: %s\ndata:\n  v: \"1\"\n", ns))
	co.Write(fleetDir+"/app/policy.yaml", fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: config
  namespace: %s
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames: [%s]
`, ns, strings.Join(names, ", ")))
	rev := co.CommitPush("trust: clusters that try to redirect credentials")

	s := newSetup(t, remote)
	s.KubeconfigDir = ""
	s.Hub, s.HubNamespace = hub, hubNS
	r := startController(t, s)
	r.waitRevision(rev)

	// The positive case: the correctly bound member is contacted and applied.
	eventually(t, converge, func() (bool, string) {
		cm, err := getConfigMap(m1, ns, "config")
		return err == nil && cm != nil, fmt.Sprintf("%s: ConfigMap %s/config: %v", m1.Name, ns, err)
	})
	checkMismatches := func(attacks map[string]struct{ ref, mention string }) {
		t.Helper()
		for name, a := range attacks {
			eventually(t, converge, func() (bool, string) {
				_, ok := r.logs.find("member probe failed", "cluster="+name, workv1alpha1.ReasonCredentialMismatch, a.mention)
				return ok, fmt.Sprintf("no probe of %s logged %s naming %q", name, workv1alpha1.ReasonCredentialMismatch, a.mention)
			})
		}
	}
	// Several more passes, each probing and delivering to every Cluster.
	r.waitPasses(3)
	if got := trap.received(); len(got) > 0 {
		t.Fatalf("the attacker's endpoint was contacted %d times: %q", len(got), got)
	}
	checkMismatches(attacks)

	// member1's own Cluster redirected to the trap: refused as well, and
	// what member1 runs is left alone.
	co.Write(fleetDir+"/clusters/"+m1.Name+".yaml", trustCluster(m1.Name, trap.URL, cluster.DefaultNamespace+"/"+join.SecretName(m1.Name)))
	rev2 := co.CommitPush("trust: member1 redirected")
	r.waitRevision(rev2)
	r.waitPasses(3)
	if got := trap.received(); len(got) > 0 {
		t.Fatalf("the attacker's endpoint was contacted %d times: %q", len(got), got)
	}
	checkMismatches(map[string]struct{ ref, mention string }{m1.Name: {mention: "spec.apiEndpoint " + trap.URL + " is not the server"}})
	if cm, err := getConfigMap(m1, ns, "config"); err != nil || cm == nil {
		t.Errorf("%s lost its ConfigMap after its Cluster was redirected: %v", m1.Name, err)
	}
	for _, l := range r.logs.all() {
		if strings.Contains(l, trustGitToken) || strings.Contains(l, trustLooseToken) {
			t.Errorf("a log line holds a token: %s", l)
		}
	}
}

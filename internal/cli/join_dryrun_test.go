package cli

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// recordingServer stands for an apiserver and counts every request it
// gets: a dry run must get none.
func recordingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "a dry run must not call", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// kubeconfigFor writes a kubeconfig reaching srv with its CA.
func kubeconfigFor(t *testing.T, srv *httptest.Server, name string) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJoinDryRunContactsNothing: join --dry-run prints every object it
// would create, RBAC included, in the member and on the hub, and the
// Cluster to commit, while neither apiserver gets a single request.
func TestJoinDryRunContactsNothing(t *testing.T) {
	member, memberCalls := recordingServer(t)
	hub, hubCalls := recordingServer(t)
	memberKC, hubKC := kubeconfigFor(t, member, "edge-1"), kubeconfigFor(t, hub, "hub")

	stdout, _ := runCLI(t, 0, "join", "edge-1", "--kubeconfig", memberKC, "--mode", "push", "--dry-run", "--namespaces", "shop")
	docs := yamlDocs(t, stdout)
	for _, want := range []string{"Namespace/propagit-system", "Namespace/shop", "ServiceAccount/propagit-system/propagit",
		"ClusterRole/propagit-member-namespaced", "RoleBinding/shop/propagit-member", "Cluster/edge-1"} {
		if docs[want] == nil {
			t.Errorf("the plan lacks %s; it has %v", want, docNames(docs))
		}
	}
	if ep, _ := docs["Cluster/edge-1"]["spec"].(map[string]any)["apiEndpoint"].(string); ep != member.URL {
		t.Errorf("Cluster apiEndpoint %q, want the kubeconfig's %q", ep, member.URL)
	}
	if strings.Contains(stdout, "token:") || docs["Secret/karmada-cluster/edge-1-credentials"] != nil {
		t.Errorf("a dry run printed a credential:\n%s", stdout)
	}

	out := t.TempDir()
	runCLI(t, 0, "join", "edge-2", "--kubeconfig", memberKC, "--mode", "pull", "--hub-kubeconfig", hubKC, "--dry-run", "--out", out)
	hubObjects, err := os.ReadFile(filepath.Join(out, "edge-2-hub-objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hubDocs := yamlDocs(t, string(hubObjects))
	if role := hubDocs["Role/propagit-member-edge-2/propagit-agent"]; role == nil {
		t.Errorf("the hub plan lacks the agent's Role: %v", docNames(hubDocs))
	}
	for _, f := range []string{"edge-2-member-objects.yaml", "edge-2-cluster.yaml", "edge-2-agent.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("--out lacks %s: %v", f, err)
		}
	}
	if n, h := memberCalls.Load(), hubCalls.Load(); n != 0 || h != 0 {
		t.Errorf("a dry run sent %d requests to the member and %d to the hub, want none", n, h)
	}
}

// yamlDocs indexes a YAML stream by Kind/namespace/name (Kind/name when
// cluster-scoped).
func yamlDocs(t *testing.T, stream string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(stream, "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		if m == nil {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		key := m["kind"].(string) + "/"
		if ns, _ := meta["namespace"].(string); ns != "" {
			key += ns + "/"
		}
		out[key+meta["name"].(string)] = m
	}
	return out
}

func docNames(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

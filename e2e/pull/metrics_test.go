package pull

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/cli"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// TestPullAgentExportsMetrics runs `propagit agent` (the command, in
// process) against a real member and the Git store over smart HTTP, and
// scrapes its /metrics: the apply results and applied objects of its own
// member, under the names the controller uses for push members, so the
// same alerts cover both.
func TestPullAgentExportsMetrics(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	r := e2etest.HTTPRemote(t)
	ns := randomName("agentmetrics")
	f := newFleet(t, r.URL)
	f.write("clusters/"+m.Name+".yaml", e2etest.ClusterYAML(m.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, m.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	rev := f.CommitPush("app on a pull member")
	store := newGitStore(t, gitstore.Options{URL: r.URL})
	c := startController(t, hubSetup{SourceURL: r.URL, Works: store, Status: store, Options: controllerOptions()})
	c.waitRevision(t, rev)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var out bytes.Buffer
	root := cli.NewRootCommand(&out, &out)
	root.SetArgs([]string{"agent", "--cluster", m.Name, "--repo", r.URL, "--kubeconfig", m.KubeconfigPath,
		"--interval", "500ms", "--cache-dir", t.TempDir(), "--metrics-addr", addr, "--log-format", "console"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("propagit agent: %v", err)
		}
	})
	eventually(t, converge, configMapValue(m, ns, "app", "v1"))
	want := []string{
		fmt.Sprintf(`propagit_apply_total{cluster=%q,result="success"}`, m.Name),
		fmt.Sprintf(`propagit_applied_objects_total{action="created",cluster=%q}`, m.Name),
	}
	eventually(t, converge, func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				return false, "no " + w + " in /metrics"
			}
		}
		return true, ""
	})
}

package pull

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// gate is the member's network path to the Git server: a reverse proxy on
// a fixed loopback address that can be taken down — connections refused,
// or accepted and reset as a broken middlebox would — and brought back on
// the same address.
type gate struct {
	t     testing.TB
	addr  string
	proxy http.Handler

	mu    sync.Mutex
	srv   *http.Server
	reset net.Listener
}

// newGate proxies to target until the test ends.
func newGate(t testing.TB, target string) *gate {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{t: t, proxy: httputil.NewSingleHostReverseProxy(u)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	g.serve(ln)
	t.Cleanup(g.down)
	return g
}

// url returns the proxied URL of path on the Git server.
func (g *gate) url(path string) string { return "http://" + g.addr + path }

func (g *gate) serve(ln net.Listener) {
	srv := &http.Server{Handler: g.proxy, ReadHeaderTimeout: 10 * time.Second}
	g.mu.Lock()
	g.srv = srv
	g.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.t.Errorf("gate: %v", err)
		}
	}()
}

// down closes the listener and every open connection: connections are
// refused.
func (g *gate) down() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.srv != nil {
		_ = g.srv.Close()
		g.srv = nil
	}
	if g.reset != nil {
		_ = g.reset.Close()
		g.reset = nil
	}
}

// listen listens on the gate's address again.
func (g *gate) listen() net.Listener {
	g.t.Helper()
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		g.t.Fatalf("gate: failed to listen on %s again: %v", g.addr, err)
	}
	return ln
}

// up serves the Git server again.
func (g *gate) up() {
	g.t.Helper()
	g.down()
	g.serve(g.listen())
}

// resetting accepts connections and resets each one at once.
func (g *gate) resetting() {
	g.t.Helper()
	g.down()
	ln := g.listen()
	g.mu.Lock()
	g.reset = ln
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close sends RST
			}
			_ = c.Close()
		}
	}()
}

// TestPullSourceUnreachable: the Git server holding the work branch goes
// away for the member (its status repository stays reachable, as a
// separate host would). The agent keeps everything applied, says in its
// status that the source is unreachable and what runs is stale — one status
// write, not one per poll — and when the server returns it applies the
// commit made meanwhile and clears the message.
func TestPullSourceUnreachable(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	r := e2etest.HTTPRemote(t)
	statusURL, err := r.Server.InitBare("status.git")
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(t, r.Server.URL)
	ns := randomName("unreachable")

	f := newFleet(t, r.URL)
	f.write("clusters/"+m.Name+".yaml", e2etest.ClusterYAML(m.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, m.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	f.write("other.yaml", configMapYAML(ns, "other", "v1"))
	rev1 := f.CommitPush("app v1")
	// The hub reaches the server directly; only the member's path breaks.
	hubStore := newGitStore(t, gitstore.Options{URL: r.URL, StatusURL: statusURL, CacheDir: t.TempDir()})
	c := startController(t, hubSetup{SourceURL: r.URL, Works: hubStore, Status: hubStore, Options: controllerOptions()})

	var member requestCounter
	store := newGitStore(t, gitstore.Options{URL: g.url("/fleet.git"), StatusURL: statusURL})
	src := &countingSource{Source: store}
	recorder := &statusRecorder{StatusStore: store}
	a := newAgent(t, agentOptions(m.Name), src, recorder, member.wrap(m.Config))
	startLoop(t, "agent", a.Run)
	reader := newGitStore(t, gitstore.Options{URL: r.URL, StatusURL: statusURL})
	waitStatus(t, reader, m.Name, "rev1 applied and Ready", appliedReady(rev1))
	before := snapshotConfigMaps(t, m, ns)

	g.down()
	down := time.Now()
	// A commit the member cannot see yet.
	f.write("app.yaml", configMapYAML(ns, "app", "v2"))
	rev2 := f.CommitPush("app v2")
	c.waitRevision(t, rev2)
	member.reset()
	st := waitStatus(t, reader, m.Name, "a message that the source is unreachable", func(st *workv1alpha1.WorkStatus) bool {
		return strings.Contains(st.Message, "unreachable")
	})
	t.Logf("source down: reported after %s: %s", time.Since(down).Round(time.Millisecond), e2etest.DescribeStatus(st))
	if !strings.Contains(st.Message, "what is applied stays") {
		t.Errorf("message %q does not say that what is applied stays", st.Message)
	}
	if strings.Contains(st.Message, rev2) || st.AppliedRevision != rev1 {
		t.Errorf("status while the source is down: %s; want rev1 still applied", e2etest.DescribeStatus(st))
	}
	// The first failures may differ (open connections cut, then refused):
	// let them settle, then the same outage must cost no more pushes.
	src.waitPolls(t, 2)
	statusPushes := r.Server.Pushes()
	window := src.waitPolls(t, 6)
	_, dry, writes := member.counts()
	t.Logf("source down for 6 more polls (%s): status pushes=%d, member dry-runs=%d writes=%d",
		window.Round(time.Millisecond), r.Server.Pushes()-statusPushes, dry, len(writes))
	if n := r.Server.Pushes() - statusPushes; n > 0 {
		t.Errorf("%d status pushes while the source stayed down, want none after the first report", n)
	}
	if len(writes) > 0 || dry > 0 {
		t.Errorf("agent wrote to the member while its source was down: %v, %d dry runs", writes, dry)
	}
	if after := snapshotConfigMaps(t, m, ns); !maps.Equal(before, after) {
		t.Errorf("objects changed while the source was down:\nbefore %v\nafter  %v", before, after)
	}

	// A path that accepts and resets connections: each failure names a new
	// local port, yet it is the same outage and no new status.
	g.resetting()
	eventually(t, converge, func() (bool, string) {
		st := recorder.last()
		return st != nil && strings.Contains(st.Message, "reset"), fmt.Sprintf("last status handed to the store: %s", e2etest.DescribeStatus(st))
	})
	src.waitPolls(t, 2)
	statusPushes = r.Server.Pushes()
	window = src.waitPolls(t, 6)
	t.Logf("source resetting connections for 6 polls (%s): status pushes=%d", window.Round(time.Millisecond), r.Server.Pushes()-statusPushes)
	if n := r.Server.Pushes() - statusPushes; n > 0 {
		t.Errorf("%d status pushes in 6 polls of one outage (connections reset), want none: the message changes from poll to poll", n)
	}

	g.up()
	up := time.Now()
	eventually(t, converge, configMapValue(m, ns, "app", "v2"))
	st = waitStatus(t, reader, m.Name, "rev2 applied, Ready, no message", func(st *workv1alpha1.WorkStatus) bool {
		return appliedReady(rev2)(st) && st.Message == ""
	})
	t.Logf("source back: rev2 applied and reported %s after the server returned", time.Since(up).Round(time.Millisecond))
	if ok, msg := configMapValue(m, ns, "other", "v1")(); !ok {
		t.Error(msg)
	}
}

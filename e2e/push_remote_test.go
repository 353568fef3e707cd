package e2e

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/testenv"
)

// Basic-auth credentials of the remote in TestPushRemoteUnreachable; they
// travel in the URL and must never show up in errors or logs.
const (
	remoteUser     = "e2e-user"
	remotePassword = "s3cret-Tok3n-do-not-print"
)

// TestPushRemoteUnreachable takes the Git server away while the controller
// runs: the last good revision stays in force and applied, the fetch error
// is reported without the credentials in the URL, and when a server comes
// back on the same address (serving commits pushed meanwhile) the
// controller recovers on its own.
func TestPushRemoteUnreachable(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	ns := randomNamespace("unreachable")
	root := t.TempDir()
	srvOpts := gitserver.Options{Username: remoteUser, Password: remotePassword}
	first, err := gitserver.New(root, srvOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Close)
	if _, err := first.InitBare("fleet.git"); err != nil {
		t.Fatal(err)
	}
	fr := newFront(t, first.URL)
	remote := &e2etest.Remote{
		URL: fmt.Sprintf("http://%s:%s@%s/fleet.git", remoteUser, remotePassword, fr.addr),
		Dir: filepath.Join(root, "fleet.git"),
	}
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name)
	co.Write(fleetDir+"/app-config.yaml", e2etest.ConfigMapYAML(ns, "app-config", "v1"))
	rev1 := co.CommitPush("app-config v1")
	ctrl := startController(t, newSetup(t, remote, m1))
	eventually(t, converge, configValueIs(m1, ns, "app-config", "v1"))
	status.waitApplied(rev1, m1.Name)
	cm, err := getConfigMap(m1, ns, "app-config")
	if err != nil || cm == nil {
		t.Fatalf("app-config: %v", err)
	}

	// The server goes away.
	fr.down()
	first.Close()
	down := time.Now()
	var srcErr string
	eventually(t, converge, func() (bool, string) {
		st := ctrl.State()
		srcErr = st.SourceError
		return strings.Contains(st.SourceError, "failed to fetch") && st.Revision == rev1,
			fmt.Sprintf("want a fetch error with %s in force; state %+v", e2etest.Short(rev1), st)
	})
	t.Logf("timing: outage reported %s after the server stopped: %s", time.Since(down).Round(time.Millisecond), srcErr)
	checkNoCredentials(t, "State().SourceError", srcErr)
	ctrl.waitPasses(2)
	if !ctrl.Ready() {
		t.Errorf("controller not ready during the outage although %s is in force", e2etest.Short(rev1))
	}
	now, err := getConfigMap(m1, ns, "app-config")
	if err != nil || now == nil || now.UID != cm.UID || now.Data["value"] != "v1" {
		t.Fatalf("app-config changed during the outage: %+v (err %v)", now, err)
	}

	// A commit lands on the repository while the server is down (pushed
	// straight to the bare repository on disk).
	co.Write(fleetDir+"/app-config.yaml", e2etest.ConfigMapYAML(ns, "app-config", "v2"))
	rev2 := co.Commit("app-config v2")
	co.Push("file://" + remote.Dir)

	// A new server on the same root, behind the same address.
	second, err := gitserver.New(root, srvOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	fr.up(second.URL)
	back := time.Now()
	ctrl.waitRevision(rev2)
	eventually(t, converge, configValueIs(m1, ns, "app-config", "v2"))
	t.Logf("timing: %s applied %s after the server came back", e2etest.Short(rev2), time.Since(back).Round(time.Millisecond))
	status.waitApplied(rev2, m1.Name)
	if now, err := getConfigMap(m1, ns, "app-config"); err != nil || now == nil || now.UID != cm.UID {
		t.Errorf("app-config was recreated across the outage: %+v (err %v)", now, err)
	}
	for _, l := range ctrl.logs.all() {
		checkNoCredentials(t, "controller log", l)
	}
	if second.Fetches() == 0 {
		t.Errorf("the second server served no fetch")
	}
}

// checkNoCredentials fails the test when s holds the remote's password or
// user.
func checkNoCredentials(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, remotePassword) || strings.Contains(s, remoteUser) {
		t.Errorf("%s leaks credentials: %s", what, s)
	}
}

// configValueIs reports whether ConfigMap ns/name has data.value == want.
func configValueIs(m *testenv.Member, ns, name, want string) func() (bool, string) {
	return func() (bool, string) {
		cm, err := getConfigMap(m, ns, name)
		switch {
		case err != nil:
			return false, fmt.Sprintf("%s: %v", m.Name, err)
		case cm == nil:
			return false, fmt.Sprintf("%s: ConfigMap %s/%s not found", m.Name, ns, name)
		case cm.Data["value"] != want:
			return false, fmt.Sprintf("%s: ConfigMap %s/%s value %q, want %q", m.Name, ns, name, cm.Data["value"], want)
		}
		return true, ""
	}
}

// front is a reverse proxy on a fixed loopback address in front of a Git
// server, so the server can go away and a new one come back behind the
// same URL, as a real remote does.
type front struct {
	t    testing.TB
	addr string
	srv  *http.Server
	done chan struct{}
}

func newFront(t testing.TB, target string) *front {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{t: t, addr: ln.Addr().String()}
	f.serve(ln, target)
	t.Cleanup(f.down)
	return f
}

func (f *front) serve(ln net.Listener, target string) {
	u, err := url.Parse(target)
	if err != nil {
		f.t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	f.srv = &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	f.done = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln)
	}(f.srv, f.done)
}

// down closes the listener and every connection: the address refuses
// connections until up.
func (f *front) down() {
	if f.srv == nil {
		return
	}
	_ = f.srv.Close()
	<-f.done
	f.srv = nil
}

// up listens on the same address again, in front of target.
func (f *front) up(target string) {
	f.t.Helper()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		f.t.Fatalf("failed to listen on %s again: %v", f.addr, err)
	}
	f.serve(ln, target)
}

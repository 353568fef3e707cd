package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// atOnce bounds what should happen at once (a refusal, a stop): generous,
// so a machine with both cores busy passes, yet far below the minute after
// which a hung command is cut off.
const atOnce = 30 * time.Second

// runCommand runs propagit with args until it returns or ctx ends, and how
// long it took.
func runCommand(ctx context.Context, args ...string) (error, time.Duration) {
	cmd := NewRootCommand(io.Discard, io.Discard)
	cmd.SetArgs(args)
	start := time.Now()
	err := cmd.ExecuteContext(ctx)
	return err, time.Since(start)
}

func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 2 // what Execute makes of any other error
}

// memberKubeconfig writes a kubeconfig for a member nobody listens on.
func memberKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "member.kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: m, user: {token: t}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every option is validated before anything runs: an invalid one exits 2
// with a message naming its flag. `--interval 0s` used to panic in
// NewTicker (controller and agent alike) and negative durations were
// accepted.
func TestInvalidOptionsExitTwoNamingTheFlag(t *testing.T) {
	controller := []string{"controller", "--repo", "file:///nonexistent/fleet.git", "--health-addr", "", "--http-addr", "",
		"--cache-dir", t.TempDir()}
	agent := []string{"agent", "--cluster", "edge-1", "--repo", "file:///nonexistent/fleet.git",
		"--kubeconfig", memberKubeconfig(t), "--cache-dir", t.TempDir()}
	tests := []struct {
		base []string
		args []string
		flag string
	}{
		{controller, []string{"--interval", "0s"}, "--interval"},
		{controller, []string{"--interval", "-1m"}, "--interval"},
		{controller, []string{"--probe-interval", "-1s"}, "--probe-interval"},
		{controller, []string{"--probe-timeout", "0s"}, "--probe-timeout"},
		{controller, []string{"--drift-interval", "-5m"}, "--drift-interval"},
		{controller, []string{"--pull-heartbeat-timeout", "-1s"}, "--pull-heartbeat-timeout"},
		{controller, []string{"--cluster-failure-threshold", "-1s"}, "--cluster-failure-threshold"},
		{controller, []string{"--cluster-success-threshold", "-1s"}, "--cluster-success-threshold"},
		{controller, []string{"--member-qps", "0"}, "--member-qps"},
		{controller, []string{"--member-burst", "-1"}, "--member-burst"},
		{controller, []string{"--leader-elect", "--leader-elect-renew-deadline", "20s"}, "--leader-elect-renew-deadline"},
		{controller, []string{"--leader-elect", "--leader-elect-retry-period", "0s"}, "--leader-elect-retry-period"},
		{agent, []string{"--interval", "0s"}, "--interval"},
		{agent, []string{"--interval", "-30s"}, "--interval"},
		{agent, []string{"--probe-timeout", "0s"}, "--probe-timeout"},
		{agent, []string{"--drift-interval", "-1s"}, "--drift-interval"},
		{agent, []string{"--heartbeat-interval", "-1s"}, "--heartbeat-interval"},
	}
	for _, tc := range tests {
		name := tc.base[0] + " " + strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err, took := runCommand(ctx, append(append([]string{}, tc.base...), tc.args...)...)
			if err == nil {
				t.Fatalf("%s ran (for %s) instead of failing", name, took.Round(time.Millisecond))
			}
			if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("%s: exit %d %q, want exit 2 naming %s", name, exitCode(err), err, tc.flag)
			}
			if took > atOnce {
				t.Errorf("%s took %s to fail, want at once (within %s)", name, took, atOnce)
			}
		})
	}
}

// listenLocal returns a listener on a free loopback port.
func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// A server that cannot bind stops the controller with exit 1, at once, and
// leaves nothing serving. It used to be logged while the controller ran
// on without its metrics and webhook.
func TestControllerStopsWhenAPortIsTaken(t *testing.T) {
	taken := listenLocal(t)
	free := listenLocal(t)
	freeAddr := free.Addr().String()
	_ = free.Close() // the health server may take it
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err, took := runCommand(ctx, "controller", "--repo", "file:///nonexistent/fleet.git", "--cache-dir", t.TempDir(),
		"--health-addr", freeAddr, "--http-addr", taken.Addr().String())
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("controller returned %v (exit %d) after %s, want exit 1", err, exitCode(err), took)
	}
	if !strings.Contains(err.Error(), "--http-addr") || !strings.Contains(err.Error(), taken.Addr().String()) {
		t.Errorf("error %q does not name --http-addr and its address", err)
	}
	if took > atOnce {
		t.Errorf("the controller took %s to stop, want at once (within %s)", took, atOnce)
	}
	if c, err := net.DialTimeout("tcp", freeAddr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("something still serves on %s (--health-addr) after the controller returned", freeAddr)
	}
}

// Shutdown waits for the controller and for the requests in flight:
// runGroup returns only once both have finished.
func TestRunGroupWaitsForRequestsInFlight(t *testing.T) {
	inFlight, release := make(chan struct{}), make(chan struct{})
	s, err := listen("--http-addr", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(inFlight)
		<-release
		fmt.Fprintln(w, "done")
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	fnDone := make(chan struct{})
	returned := make(chan error, 1)
	go func() {
		returned <- runGroup(ctx, func(ctx context.Context) error { <-ctx.Done(); close(fnDone); return nil }, s)
	}()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.ln.Addr().String())
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- strings.TrimSpace(string(b))
	}()
	<-inFlight
	cancel()
	<-fnDone
	select {
	case err := <-returned:
		t.Fatalf("runGroup returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "done" {
		t.Errorf("the request in flight got %q, want its answer", body)
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Errorf("runGroup = %v, want nil after a clean shutdown", err)
		}
	case <-time.After(shutdownTimeout + atOnce):
		t.Fatal("runGroup did not return after the shutdown")
	}
}

package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDashboardCommand: `propagit dashboard` serves the members recorded
// in the git store of --repo, only to requests with the token of
// --token-file, and returns cleanly when interrupted; bad options exit 2.
func TestDashboardCommand(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a"})
	f.report("m1", true, "True", "ok")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := listenLocal(t)
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err, _ := runCommand(ctx, "dashboard", f.url, "--addr", addr, "--token-file", token, "--refresh", "200ms")
		done <- err
	}()
	get := func(bearer string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get("s3cret")
		if code == http.StatusOK && strings.Contains(body, `data-member="m1"`) && strings.Contains(body, `data-member="m2"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard never listed m1 and m2: status %d\n%s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupted dashboard returned %v, want nil", err)
		}
	case <-time.After(shutdownTimeout + atOnce):
		t.Fatal("the dashboard did not stop when interrupted")
	}

	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{f.url, "--refresh", "10ms"},
		{"--works-store", "git"},
		{f.url, "--token-file", empty},
	} {
		err, _ := runCommand(context.Background(), append([]string{"dashboard", "--addr", "127.0.0.1:0"}, args...)...)
		if exitCode(err) != 2 {
			t.Errorf("dashboard %v: %v (exit %d), want exit 2", args, err, exitCode(err))
		}
	}
}

// TestDashboardBesideController: controller --dashboard-addr serves the
// pages (here showing that the records cannot be read yet), and a taken
// address stops the controller at once with exit 1 naming the flag.
func TestDashboardBesideController(t *testing.T) {
	base := []string{"controller", "--repo", "file:///nonexistent/fleet.git", "--cache-dir", t.TempDir(), "--health-addr", "", "--http-addr", ""}
	taken := listenLocal(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err, took := runCommand(ctx, append(base, "--dashboard-addr", taken.Addr().String())...)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "--dashboard-addr") || took > atOnce {
		t.Errorf("dashboard address taken: %v (exit %d) after %s, want exit 1 naming --dashboard-addr at once", err, exitCode(err), took)
	}

	l := listenLocal(t)
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err, _ := runCommand(ctx, append(base, "--dashboard-addr", addr)...)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK && strings.Contains(string(b), `role="alert"`) &&
				res.Header.Get("Content-Security-Policy") != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller's dashboard never served the fleet page with the read error: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(shutdownTimeout + 30*time.Second):
		t.Fatal("the controller did not stop when interrupted")
	}
}

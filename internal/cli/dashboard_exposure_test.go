package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDashboardRefusesToServeBeyondLoopbackWithoutToken: without a token,
// an address other hosts reach would hand the fleet to whoever reaches it
// (a user header is no help: anyone can set it). Both the dashboard
// command and the controller's --dashboard-addr refuse at once, naming the
// flag and where the token comes from.
func TestDashboardRefusesToServeBeyondLoopbackWithoutToken(t *testing.T) {
	t.Setenv(dashboardTokenEnv, "")
	f := newWorkFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"dashboard", f.url, "--addr", "0.0.0.0:0", "--user-header", "X-Forwarded-User"},
			[]string{"--addr 0.0.0.0:0", "--token-file", "$" + dashboardTokenEnv}},
		{[]string{"controller", "--repo", "file:///nonexistent/fleet.git", "--cache-dir", t.TempDir(), "--health-addr", "", "--http-addr", "",
			"--dashboard-addr", "0.0.0.0:0"}, []string{"--dashboard-addr 0.0.0.0:0", "$" + dashboardTokenEnv}},
	} {
		err, took := runCommand(ctx, tc.args...)
		if exitCode(err) != 1 || took > 10*time.Second {
			t.Errorf("%s: %v (exit %d) after %s, want exit 1 at once", tc.args[0], err, exitCode(err), took)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %s", tc.args[0], err, w)
			}
		}
	}
}

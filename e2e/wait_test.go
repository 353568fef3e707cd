package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/cli"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/testenv"
)

// cliRun is one in-process run of the propagit command.
type cliRun struct {
	code           int
	stdout, stderr string
	err            error
}

// runCLI runs propagit with args in-process, as the binary would, and
// returns its exit code (Execute's mapping) and output.
func runCLI(t *testing.T, timeout time.Duration, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCommand(&out, &errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	r := cliRun{stdout: out.String(), stderr: errOut.String(), err: err}
	var ee *cli.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.Code
	default:
		r.code = 2
	}
	return r
}

func (r cliRun) String() string {
	return fmt.Sprintf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", r.code, r.err, r.stdout, r.stderr)
}

// TestOpsWaitForARevision is what a deploy pipeline does after a merge:
// `propagit wait` for the pushed revision exits 0 once both real members
// run it (and they do), `status --exit-code` agrees, and `wait --revision
// main` resolves the branch in the checkout. With member2's apiserver
// stopped, the next revision reaches member1 only: waiting for the first
// revision then exits 3 at once (superseded on member1), and wait exits 1
// with member2 in its reason table, the status row names the probe's real
// cause, and `status --exit-code` exits 1. A member without credentials
// shows NoCredentials in its row, as its message and as its Ready reason.
func TestOpsWaitForARevision(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	m1, m2 := env.Members[0], env.Members[1]
	ns := randomNamespace("wait")
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name, m2.Name)
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	rev1, pushed := co.CommitPush("app v1"), time.Now()
	startController(t, newSetup(t, remote, env.Members...))
	store := []string{"--repo", remote.URL}

	r := runCLI(t, 2*converge, append([]string{"wait", "--revision", rev1[:7], "--timeout", converge.String(), "--interval", "200ms"}, store...)...)
	if r.code != 0 {
		t.Fatalf("wait for %s: %s", e2etest.Short(rev1), r)
	}
	t.Logf("timing: wait for %s returned %s after the push", e2etest.Short(rev1), time.Since(pushed).Round(time.Millisecond))
	for _, m := range env.Members { // wait said healthy: no polling here
		cm, err := getConfigMap(m, ns, "app")
		if err != nil || cm == nil || cm.Data["value"] != "v1" {
			t.Errorf("%s: wait exited 0 but ConfigMap app is %+v (%v), want value v1", m.Name, cm, err)
		}
	}
	if r := runCLI(t, converge, append([]string{"status", "--exit-code"}, store...)...); r.code != 0 {
		t.Errorf("status --exit-code with both members on %s: %s", e2etest.Short(rev1), r)
	}
	// A branch name is resolved in the checkout the pipeline runs in.
	if r := runCLI(t, 2*converge, append([]string{"wait", co.Dir, "--revision", "main", "--timeout", converge.String(), "--interval", "200ms"}, store...)...); r.code != 0 {
		t.Errorf("wait --revision main: %s, want exit 0 (main is %s)", r, e2etest.Short(rev1))
	}

	if err := m2.StopAPIServer(); err != nil {
		t.Fatalf("failed to stop member2's apiserver: %v", err)
	}
	co.Edit(fleetDir+"/app.yaml", `"v1"`, `"v2"`)
	rev2 := co.CommitPush("app v2")
	r = runCLI(t, 2*converge, append([]string{"wait", "--revision", rev2, "--for", "applied", "--cluster", m1.Name,
		"--timeout", converge.String(), "--interval", "200ms"}, store...)...)
	if r.code != 0 {
		t.Fatalf("wait for %s on member1 alone: %s", e2etest.Short(rev2), r)
	}
	// rev2 changed what member1 runs: waiting for rev1 now can never end,
	// and wait says so at once, with its own exit code.
	began := time.Now()
	r = runCLI(t, 2*converge, append([]string{"wait", co.Dir, "--revision", rev1, "--timeout", "5m", "--interval", "200ms"}, store...)...)
	if r.code != 3 || time.Since(began) > converge || !strings.Contains(r.err.Error(), m1.Name) {
		t.Errorf("wait for the superseded %s: %s after %s, want exit 3 at once naming %s", e2etest.Short(rev1), r, time.Since(began).Round(time.Second), m1.Name)
	}

	// The status row names the probe's cause, not a fixed sentence.
	eventually(t, converge, func() (bool, string) {
		r := runCLI(t, converge, append([]string{"status", "-o", "json", "--cluster", m2.Name}, store...)...)
		var rep status.Report
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || len(rep.Clusters) != 1 {
			return false, r.String()
		}
		msg := rep.Clusters[0].Message
		return strings.HasPrefix(msg, "member not reachable: ClusterUnreachable: readyz failed"),
			fmt.Sprintf("member2's message = %q, want the probe's cause", msg)
	})

	// The timeout must cover reading the store over HTTP, which takes
	// seconds on a loaded machine; member2 never reaches it anyway.
	r = runCLI(t, converge, append([]string{"wait", "--revision", rev2[:12], "--timeout", "15s", "--interval", "200ms"}, store...)...)
	if r.code != 1 {
		t.Fatalf("wait for %s with member2 down: %s, want exit 1", e2etest.Short(rev2), r)
	}
	rows := tableRows(r.stdout)
	if got := rows[m1.Name]; len(got) < 2 || got[1] != "yes" {
		t.Errorf("member1's row %v, want reached; %s", got, r)
	}
	if got := strings.Join(rows[m2.Name], " "); !strings.Contains(got, "no "+rev1[:7]+" False not applied yet: member not reachable: ClusterUnreachable") {
		t.Errorf("member2's row %q, want not reached, %s applied, the probe's cause; %s", got, rev1[:7], r)
	}
	if !strings.Contains(r.err.Error(), "timed out after 15s: 1/2 clusters reached") {
		t.Errorf("wait's error %v, want 1/2 clusters reached", r.err)
	}
	t.Logf("wait with member2 down:\n%s", r.stdout)
	if r := runCLI(t, converge, append([]string{"status", "--exit-code"}, store...)...); r.code != 1 {
		t.Errorf("status --exit-code with member2 down: %s, want exit 1", r)
	}

	// A member the hub holds no credentials for says so in its row.
	const ghost = "ghost"
	co.ConfigMapFleet(ns, m1.Name, m2.Name, ghost)
	co.CommitPush("a member without credentials")
	eventually(t, converge, func() (bool, string) {
		r := runCLI(t, converge, append([]string{"status", "-o", "json", "--cluster", ghost}, store...)...)
		var rep status.Report
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || len(rep.Clusters) != 1 {
			return false, r.String()
		}
		msg, reason := rep.Clusters[0].Message, rep.Clusters[0].Reason
		return strings.HasPrefix(msg, "member not reachable: NoCredentials: ") && strings.Contains(msg, ghost) && reason == "NoCredentials",
			fmt.Sprintf("%s's message = %q, reason %q; want NoCredentials naming it (wait stops on that reason)", ghost, msg, reason)
	})
}

// tableRows splits a table printed by the CLI into its rows' words, by
// first column.
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	return rows
}

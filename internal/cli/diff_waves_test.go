package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyDir copies examples/waves/fleet into dst, editing each file with
// edit.
func copyWaves(t *testing.T, dst string, edit func(string) string) {
	t.Helper()
	src := "../../examples/waves/fleet"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(edit(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The pull request shows how a RolloutPolicy rolls the change out: the
// canary wave first, then the rest, in text, markdown and JSON; a change
// to a template no RolloutPolicy selects has no plan.
func TestRolloutDiffShowsWavePlan(t *testing.T) {
	base, head, svc := filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "head"), filepath.Join(t.TempDir(), "svc")
	copyWaves(t, base, func(s string) string { return s })
	copyWaves(t, head, func(s string) string { return strings.ReplaceAll(s, "nginx:1.27.3", "nginx:1.27.4") })
	copyWaves(t, svc, func(s string) string { return strings.ReplaceAll(s, "port: 80", "port: 8080") })

	out, _ := runCLI(t, 0, "diff", "--base-dir", base, "--head-dir", head, "-o", "markdown")
	want := "- `RolloutPolicy.propagit.io/demo/nginx`: `canary`: `member1` → `rest`: `member2` (on failure: Rollback)"
	if !strings.Contains(out, "**Rollout waves**") || !strings.Contains(out, want) {
		t.Errorf("markdown has no wave plan %q:\n%s", want, out)
	}
	out, _ = runCLI(t, 0, "diff", "--base-dir", base, "--head-dir", head)
	if !strings.Contains(out, "RolloutPolicy.propagit.io/demo/nginx: canary: member1 → rest: member2 (on failure: Rollback)") {
		t.Errorf("text has no wave plan:\n%s", out)
	}
	r := parseReport(t, mustRun(t, "diff", "--base-dir", base, "--head-dir", head, "-o", "json"))
	if len(r.Waves) != 1 || len(r.Waves[0].Waves) != 2 || r.Waves[0].Waves[0].Name != "canary" || r.Waves[0].Waves[1].Clusters[0] != "member2" {
		t.Errorf("json waves %+v", r.Waves)
	}
	r = parseReport(t, mustRun(t, "diff", "--base-dir", base, "--head-dir", svc, "-o", "json"))
	if !r.Differs || len(r.Waves) != 0 {
		t.Errorf("a Service change no RolloutPolicy selects: differs %v, waves %+v; want a difference and no plan", r.Differs, r.Waves)
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, _ := runCLI(t, 0, args...)
	return out
}

// lint names a RolloutPolicy that governs nothing (a misspelled name) and
// a wave that takes no cluster (a misspelled cluster), at the policy's
// file.
func TestRolloutLint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	copyWaves(t, dir, func(s string) string {
		s = strings.ReplaceAll(s, "    name: nginx\n  waves:", "    name: ngnix\n  waves:")
		return strings.ReplaceAll(s, "clusterNames: [member1]", "clusterNames: [memberl]")
	})
	out, _ := runCLI(t, 1, "lint", dir)
	for _, want := range []string{
		"rollouts/nginx-rollout.yaml:6: warning: RolloutPolicy.propagit.io/demo/nginx governs no template",
		`rollouts/nginx-rollout.yaml:6: warning: RolloutPolicy.propagit.io/demo/nginx: wave "canary" takes no cluster (the fleet declares member1, member2)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint does not say %q:\n%s", want, out)
		}
	}
	if out, _ := runCLI(t, 0, "lint", "../../examples/waves/fleet"); !strings.Contains(out, "no findings") {
		t.Errorf("the example has findings:\n%s", out)
	}
}

// explain names the RolloutPolicy that governs a template and its
// clusters' waves; a template none governs has no Rollout section.
func TestRolloutExplain(t *testing.T) {
	out := mustRun(t, "explain", "deploy/nginx", "-n", "demo", "../../examples/waves/fleet")
	if !strings.Contains(out, "Rollout:\n  RolloutPolicy.propagit.io/demo/nginx rolls a new revision out in waves: canary: member1 → rest: member2 (on failure: Rollback)") {
		t.Errorf("explain deploy/nginx has no rollout section:\n%s", out)
	}
	if out := mustRun(t, "explain", "svc/nginx", "-n", "demo", "../../examples/waves/fleet"); strings.Contains(out, "Rollout:") {
		t.Errorf("explain svc/nginx, which no RolloutPolicy governs, has a rollout section:\n%s", out)
	}
	if out := mustRun(t, "explain", "deploy/nginx", "-n", "demo", "../../examples/waves/fleet", "-o", "json"); !strings.Contains(out, `"rollout": {`) {
		t.Errorf("explain -o json has no rollout:\n%s", out)
	}
}

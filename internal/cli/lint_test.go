package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLintFindings(t *testing.T) {
	stdout, _ := runCLI(t, 1, "lint", "--source", "testdata/lintfleet", "--strict")
	golden(t, "lint.txt", stdout)
	// The override that fails for member2 is an error: lint fails by
	// default, and only on errors.
	stdout, _ = runCLI(t, 1, "lint", "--source", "testdata/lintfleet")
	golden(t, "lint.txt", stdout)
	runCLI(t, 1, "lint", "--source", "testdata/lintfleet", "--fail-on", "warning")
	runCLI(t, 0, "lint", "--source", "testdata/lintfleet", "--fail-on", "none")
}

// TestLintSeverities checks that a fleet with warnings only passes by
// default and fails with --fail-on warning.
func TestLintSeverities(t *testing.T) {
	stdout, _ := runCLI(t, 0, "lint", "--source", "../../examples/quickstart/fleet", "--fail-on", "error")
	if strings.Contains(stdout, ": error: ") {
		t.Fatalf("the quickstart has errors:\n%s", stdout)
	}
	dir := t.TempDir()
	for _, f := range []string{"clusters.yaml", "app.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata/lintfleet", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(b))
	}
	stdout, _ = runCLI(t, 0, "lint", "--source", dir)
	if !strings.Contains(stdout, ": warning: Namespace.core/kube-app-prod") {
		t.Errorf("want the skipped namespace as a warning:\n%s", stdout)
	}
	runCLI(t, 1, "lint", "--source", dir, "--fail-on", "warning")
}

func TestExplain(t *testing.T) {
	stdout, _ := runCLI(t, 0, "explain", "deployment/web", "-n", "shop", "--source", "testdata/lintfleet")
	golden(t, "explain.txt", stdout)
	stdout, _ = runCLI(t, 0, "explain", "deployment.apps/web", "-n", "shop", "--source", "testdata/lintfleet", "-o", "json")
	golden(t, "explain.json", stdout)
	runCLI(t, 2, "explain", "deployment/missing", "-n", "shop", "--source", "testdata/lintfleet")
}

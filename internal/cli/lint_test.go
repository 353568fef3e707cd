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

// TestLintSeverities checks that warnings fail by default and pass with
// --fail-on error, and that a fleet rendering nothing is an error.
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
	// No policy: nothing renders.
	stdout, _ = runCLI(t, 1, "lint", "--source", dir, "--fail-on", "error")
	for _, want := range []string{
		dir + ": error: the fleet renders no object for any cluster",
		"app.yaml:1: warning: Namespace/kube-app-prod",
		"app.yaml:6: warning: Deployment.apps/shop/web is selected by no PropagationPolicy",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("want %q:\n%s", want, stdout)
		}
	}
	runCLI(t, 0, "lint", "--source", dir, "--fail-on", "none")
	writeFile(t, filepath.Join(dir, "policy.yaml"), `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: all}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
	stdout, _ = runCLI(t, 1, "lint", "--source", dir)
	if strings.Contains(stdout, ": error: ") || !strings.Contains(stdout, ": warning: ") {
		t.Errorf("want warnings only:\n%s", stdout)
	}
	runCLI(t, 0, "lint", "--source", dir, "--fail-on", "error")
}

func TestExplain(t *testing.T) {
	stdout, _ := runCLI(t, 0, "explain", "deployment/web", "-n", "shop", "--source", "testdata/lintfleet")
	golden(t, "explain.txt", stdout)
	stdout, _ = runCLI(t, 0, "explain", "deployment.apps/web", "-n", "shop", "--source", "testdata/lintfleet", "-o", "json")
	golden(t, "explain.json", stdout)
	runCLI(t, 2, "explain", "deployment/missing", "-n", "shop", "--source", "testdata/lintfleet")
}

package cli

import "testing"

func TestLintFindings(t *testing.T) {
	stdout, _ := runCLI(t, 1, "lint", "--source", "testdata/lintfleet", "--strict")
	golden(t, "lint.txt", stdout)
	// Without --strict the findings are printed and the exit status is 0.
	runCLI(t, 0, "lint", "--source", "testdata/lintfleet")
}

func TestExplain(t *testing.T) {
	stdout, _ := runCLI(t, 0, "explain", "deployment/web", "-n", "shop", "--source", "testdata/lintfleet")
	golden(t, "explain.txt", stdout)
	stdout, _ = runCLI(t, 0, "explain", "deployment.apps/web", "-n", "shop", "--source", "testdata/lintfleet", "-o", "json")
	golden(t, "explain.json", stdout)
	runCLI(t, 2, "explain", "deployment/missing", "-n", "shop", "--source", "testdata/lintfleet")
}

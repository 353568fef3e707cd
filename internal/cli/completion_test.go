package cli

import (
	"strings"
	"testing"
)

// TestCompletionGolden runs cobra's hidden __complete command, what the
// shell scripts of `propagit completion` call, for each dynamic
// completion, and pins the candidates and the directive.
func TestCompletionGolden(t *testing.T) {
	const fleet = "../../examples/quickstart/fleet"
	cases := [][]string{
		{"render", "-o", ""},
		{"diff", "-o", ""},
		{"explain", "-o", ""},
		{"status", "-o", ""},
		{"install", "-o", ""},
		{"lint", "-o", ""},
		{"version", "-o", ""},
		{"render", ""},
		{"render", fleet, ""},
		{"render", "--source", fleet, "--cluster", ""},
		{"render", fleet, "--cluster", ""},
		{"render", "--source", fleet, "--cluster", "member1", "--cluster", ""},
		{"render", "--source", fleet, "--cluster", "member2,"},
		{"diff", "--base-dir", fleet, "--head-dir", fleet, "--cluster", "m"},
		{"diff", fleet, "--cluster", ""},
		{"diff", "../../examples/quickstart//fleet", "--cluster", ""},
		{"explain", "--source", fleet, "-n", "demo", ""},
		{"explain", "--source", fleet, "-n", "demo", "Dep"},
		{"explain", "--source", fleet, ""},
		{"explain", "--source", "testdata/no-such-folder", ""},
		{"explain", "--source", "testdata/lintfleet", "-n", ""},
		{"explain", "deploy/web", ""},
		{"explain", "deploy/web", "testdata/lintfleet", "-n", ""},
	}
	var b strings.Builder
	for _, args := range cases {
		stdout, _ := runCLI(t, 0, append([]string{"__complete"}, args...)...)
		b.WriteString("$ propagit " + strings.Join(args, " ") + "<TAB>\n" + stdout + "\n")
	}
	golden(t, "completion.txt", b.String())
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sharedFlag is a flag every command that has it spells alike (docs/cli.md):
// same type, same shorthand, same meaning (a phrase its help must hold).
type sharedFlag struct {
	name, shorthand, typ string
	meaning              string
	// commands must have it.
	commands []string
}

var sharedFlags = []sharedFlag{
	{"source", "s", "string", "the fleet", []string{"render", "lint", "explain", "diff", "dashboard", "wait"}},
	{"output", "o", "format", "format", []string{"render", "lint", "explain", "diff", "status", "install", "version"}},
	{"namespace", "n", "string", "namespace of the object", []string{"explain"}},
	{"controller-namespace", "", "string", "namespace of the controller",
		[]string{"controller", "agent", "status", "wait", "dashboard", "install", "uninstall"}},
	{"cluster", "", "stringSlice", "(repeatable, or comma-separated)", []string{"render", "diff", "status", "wait"}},
	{"kubeconfig", "", "string", "kubeconfig of", []string{"join", "unjoin", "agent", "install", "uninstall"}},
	{"context", "", "string", "kubeconfig context of", []string{"join", "unjoin", "agent", "install", "uninstall"}},
	{"hub-kubeconfig", "", "string", "hub", []string{"controller", "agent", "status", "wait", "dashboard", "join", "unjoin"}},
	{"hub-context", "", "string", "kubeconfig context of the hub", []string{"controller", "agent", "status", "wait", "dashboard", "join", "unjoin"}},
}

// sharedFlagExceptions are flags named like a shared one that mean
// something else, on purpose: the agent's --cluster is the one member it
// runs in.
var sharedFlagExceptions = map[string]string{"agent --cluster": "the member the agent runs in"}

// checkSharedFlags returns how cmd's flags depart from sharedFlags: a
// shared flag it lacks, or has with another type, shorthand or meaning; a
// shared shorthand on another flag; a deprecated flag still shown in help.
// A deprecated flag (kept one release as an alias) is only checked to be
// hidden.
func checkSharedFlags(cmd *cobra.Command) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, cmd.Name()+": "+fmt.Sprintf(format, args...))
	}
	for _, s := range sharedFlags {
		f := cmd.Flags().Lookup(s.name)
		if f == nil {
			if slices.Contains(s.commands, cmd.Name()) {
				bad("no --%s", s.name)
			}
			continue
		}
		if f.Deprecated != "" || sharedFlagExceptions[cmd.Name()+" --"+s.name] != "" {
			continue
		}
		if f.Value.Type() != s.typ {
			bad("--%s is a %s, want a %s", s.name, f.Value.Type(), s.typ)
		}
		if f.Shorthand != s.shorthand {
			bad("--%s has shorthand %q, want %q", s.name, f.Shorthand, s.shorthand)
		}
		if !strings.Contains(f.Usage, s.meaning) {
			bad("--%s says %q, which does not mean %q", s.name, f.Usage, s.meaning)
		}
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Deprecated != "" && !f.Hidden {
			bad("--%s is deprecated but shown in help", f.Name)
		}
		if f.Shorthand == "" || f.Deprecated != "" {
			return
		}
		for _, s := range sharedFlags {
			if s.shorthand == f.Shorthand && s.name != f.Name {
				bad("-%s is --%s, but -%s means --%s", f.Shorthand, f.Name, s.shorthand, s.name)
			}
		}
	})
	if cmd.Flags().Lookup("source") != nil && !strings.Contains(cmd.Use, "SOURCE") {
		bad("takes --source but not SOURCE: %q", cmd.Use)
	}
	if _, ok := cmd.GetFlagCompletionFunc("output"); cmd.Flags().Lookup("output") != nil && !ok {
		bad("-o does not complete its values")
	}
	return problems
}

// TestSharedFlags runs every command's --help and checks its flag set
// against sharedFlags; a wrong -o value fails before anything runs,
// naming the valid ones.
func TestSharedFlags(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	names := map[string]bool{}
	for _, cmd := range root.Commands() {
		names[cmd.Name()] = true
		t.Run(cmd.Name(), func(t *testing.T) {
			for _, p := range checkSharedFlags(cmd) {
				t.Error(p)
			}
			help, _ := runCLI(t, 0, cmd.Name(), "--help")
			for _, s := range sharedFlags {
				f := cmd.Flags().Lookup(s.name)
				if f == nil {
					continue
				}
				shown := strings.Contains(help, "--"+s.name+" ")
				if f.Hidden == shown {
					t.Errorf("--help shows --%s: %v, want %v (hidden: %v)", s.name, shown, !f.Hidden, f.Hidden)
				}
			}
			if f := cmd.Flags().Lookup("output"); f != nil {
				formats := f.Value.(*formatFlag).formats
				args := []string{cmd.Name(), "-o", "bogus"}
				if cmd.Name() == "render" {
					args = append(args, "--out", "-") // else -o bogus is the deprecated -o DIR
				}
				_, stderr := runCLI(t, 2, args...)
				if !strings.Contains(stderr, "want one of "+strings.Join(formats, ", ")) {
					t.Errorf("-o bogus: %q, want the valid formats %v", stderr, formats)
				}
			}
		})
	}
	for _, s := range sharedFlags {
		for _, c := range s.commands {
			if !names[c] {
				t.Errorf("--%s: no command %s", s.name, c)
			}
		}
	}
}

// TestSharedFlagsCheckFails: checkSharedFlags catches each kind of
// departure, so TestSharedFlags can fail.
func TestSharedFlagsCheckFails(t *testing.T) {
	cmd := &cobra.Command{Use: "render"}
	f := cmd.Flags()
	f.StringArray("cluster", nil, "show only this cluster")             // not a slice, nor comma-separated
	f.StringP("output", "o", "yaml", "output format: yaml")             // untyped, not completed
	f.BoolP("strict", "s", false, "exit 1 on any finding")              // -s is --source
	f.StringP("namespace", "n", "", "namespace of the controller")      // -n is an object's namespace
	f.String("controller-namespace", "", "namespace of the controller") // fine
	f.String("repo", "", "the repository")
	_ = f.MarkDeprecated("repo", "use SOURCE")
	f.Lookup("repo").Hidden = false
	want := []string{
		"render: no --source",
		`render: --output is a string, want a format`,
		`render: --namespace says "namespace of the controller", which does not mean "namespace of the object"`,
		"render: --cluster is a stringArray, want a stringSlice",
		`render: --cluster says "show only this cluster", which does not mean "(repeatable, or comma-separated)"`,
		"render: -s is --strict, but -s means --source",
		"render: --repo is deprecated but shown in help",
		"render: -o does not complete its values",
	}
	got := checkSharedFlags(cmd)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the check misses %q; it found:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("the check found %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// TestSourceGrammar: SOURCE is positional or --source, never both; diff
// and dashboard take a folder inside a checkout or REPO//PATH, and the
// deprecated --repo and --path still work, with a warning on stderr (not
// in the output a pipeline parses).
func TestSourceGrammar(t *testing.T) {
	const fleet = "../../examples/quickstart/fleet"
	want, _ := runCLI(t, 0, "render", "--source", fleet, "-o", "name")
	got, _ := runCLI(t, 0, "render", fleet, "-o", "name")
	if got != want {
		t.Errorf("render SOURCE differs from render --source SOURCE:\n%s", got)
	}
	_, stderr := runCLI(t, 2, "lint", fleet, "--source", fleet)
	if !strings.Contains(stderr, "the source is given twice") {
		t.Errorf("SOURCE and --source: %s", stderr)
	}

	for _, tc := range []struct{ in, repo, dir string }{
		{"https://git.example.com/fleet.git//clusters/prod", "https://git.example.com/fleet.git", "clusters/prod"},
		{"https://git.example.com/fleet.git", "https://git.example.com/fleet.git", ""},
		{"git@git.example.com:acme/fleet.git//fleet/", "git@git.example.com:acme/fleet.git", "fleet"},
		{"/srv/fleet.git//a/b", "/srv/fleet.git", "a/b"},
	} {
		if repo, dir := splitSource(tc.in); repo != tc.repo || dir != tc.dir {
			t.Errorf("splitSource(%q) = %q, %q; want %q, %q", tc.in, repo, dir, tc.repo, tc.dir)
		}
	}
	checkout := t.TempDir()
	if err := os.Mkdir(filepath.Join(checkout, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for in, dir := range map[string]string{checkout: "", filepath.Join(checkout, "fleet", "prod"): "fleet/prod"} {
		if repo, d := splitSource(in); repo != checkout || d != dir {
			t.Errorf("splitSource(%q) = %q, %q; want %q, %q (a folder inside the checkout, existing or not)", in, repo, d, checkout, dir)
		}
	}

	dir := fleetRepo(t)
	base := []string{"diff", "--base", "base", "--head", "policy-move", "-o", "json"}
	want, _ = runCLI(t, 0, append(base, dir+"//fleet")...)
	got, stderr = runCLI(t, 0, append(base, "--repo", dir, "--path", "fleet")...)
	if got != want {
		t.Errorf("diff --repo --path differs from diff REPO//PATH:\n%s", got)
	}
	if !strings.Contains(stderr, "Flag --repo has been deprecated") || !strings.Contains(stderr, "Flag --path has been deprecated") {
		t.Errorf("diff --repo --path: no deprecation warning on stderr: %q", stderr)
	}
	_, stderr = runCLI(t, 2, append(base, dir+"//fleet", "--repo", dir)...)
	if !strings.Contains(stderr, "drop --repo and --path") {
		t.Errorf("diff SOURCE --repo: %s", stderr)
	}
}

// TestControllerNamespaceAlias: -n still sets the controller's namespace
// where it used to, with a warning naming --controller-namespace.
func TestControllerNamespaceAlias(t *testing.T) {
	stdout, stderr := runCLI(t, 0, "install", "--repo", "https://git.example.com/fleet.git", "--image", "registry.example.com/propagit:v0.3.0",
		"--dry-run", "-n", "fleet-ops")
	if !strings.Contains(stdout, "--controller-namespace=fleet-ops") {
		t.Errorf("install -n fleet-ops did not set the controller's namespace:\n%s", stdout)
	}
	if !strings.Contains(stderr, "use --controller-namespace") || strings.Contains(stdout, "deprecated") {
		t.Errorf("install -n: want the warning on stderr only; stderr %q", stderr)
	}
}

package cli

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/render"
)

// TestRenderFlagsOnEveryRenderingCommand checks that every command that
// renders binds the render flags with one default (issue 17: a CI render
// must decide as the controller does; karmada-semantics.md §3.1 for
// kube-.*, §3.2 for the namespace controller, on by default).
func TestRenderFlagsOnEveryRenderingCommand(t *testing.T) {
	want := map[string]string{"skipped-namespaces": "[kube-.*]", "namespace-auto-propagation": "true"}
	for name, newCmd := range map[string]func() *cobra.Command{
		"render": newRenderCommand, "lint": newLintCommand, "explain": newExplainCommand,
		"diff": newDiffCommand, "controller": newControllerCommand,
	} {
		cmd := newCmd()
		for flag, def := range want {
			f := cmd.Flags().Lookup(flag)
			switch {
			case f == nil:
				t.Errorf("%s has no --%s", name, flag)
			case f.DefValue != def:
				t.Errorf("%s --%s defaults to %s, want %s", name, flag, f.DefValue, def)
			}
		}
	}
}

const namespaceFleet = `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
spec: {syncMode: Push}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member2}
spec: {syncMode: Push}
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-b
  labels: {namespace.karmada.io/skip-auto-propagation: "true"}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-c}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: team-b-on-member2}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Namespace, name: team-b}
  placement:
    clusterAffinity: {clusterNames: [member2]}
`

// TestExplainNamespacePlacedByPolicy runs explain as a user would
// (karmada-semantics.md §3.2): a Namespace labelled to skip
// auto-propagation is placed by the ClusterPropagationPolicy that selects
// it, and explain names that policy; with auto-propagation off, a Namespace
// no policy selects goes nowhere, and explain says why.
func TestExplainNamespacePlacedByPolicy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "all.yaml"), []byte(namespaceFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{name: "the labelled Namespace is placed by its policy",
			args:    []string{"explain", "namespace/team-b", "--source", src},
			want:    []string{"ClusterPropagationPolicy.policy.karmada.io/team-b-on-member2 wins", "Placement:\n  member2\n"},
			notWant: []string{"Placement:\n  member1", "none:", "Not propagated"}},
		{name: "with auto-propagation off an unselected Namespace goes nowhere",
			args: []string{"explain", "namespace/team-c", "--source", src, "--namespace-auto-propagation=false"},
			want: []string{"none: no ClusterPropagationPolicy selects it and namespace auto-propagation is off", "the template goes to no cluster"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _ := runCLI(t, 0, tc.args...)
			for _, s := range tc.want {
				if !strings.Contains(stdout, s) {
					t.Errorf("output lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(stdout, s) {
					t.Errorf("output has %q:\n%s", s, stdout)
				}
			}
		})
	}
}

const bindingFleet = `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
spec: {syncMode: Push}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: everyone-reads}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:authenticated}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: bindings}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding}
  placement:
    clusterAffinity: {clusterNames: [member1]}
`

// TestLintRefusesWhatTheRestrictionPolicyDenies: lint and render refuse a
// binding for every authenticated caller under the default restriction
// policy (exit 1, naming the rule and the field); a policy file that lifts
// the denial lets it through; a policy file with a typo is refused at once.
func TestLintRefusesWhatTheRestrictionPolicyDenies(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "fleet")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "all.yaml"), []byte(bindingFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := runCLI(t, 1, "lint", "--source", src)
	if out := stdout + stderr; !strings.Contains(out, "admin-bindings") || !strings.Contains(out, "subjects[0]") {
		t.Errorf("lint does not name the refusal:\n%s", out)
	}
	runCLI(t, 1, "render", "--source", src, "--out", filepath.Join(dir, "out"))

	allow := filepath.Join(dir, "restrictions.yaml")
	if err := os.WriteFile(allow, []byte("allow: [admin-bindings]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, 0, "lint", "--source", src, "--restrictions", allow)
	if err := os.WriteFile(allow, []byte("alow: [admin-bindings]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, 2, "lint", "--source", src, "--restrictions", allow)
}

// TestBindRenderFlags checks the one binding every rendering command uses:
// Karmada's defaults (kube-.* skipped, auto-propagation on), patterns
// anchored, a bad pattern refused while parsing.
func TestBindRenderFlags(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    bool
		skipped    []string // namespaces that must be skipped
		notSkipped []string
		auto       bool
	}{
		{name: "defaults skip kube-* and keep auto-propagation on", auto: true,
			skipped: []string{"kube-system", "kube-node-lease"}, notSkipped: []string{"team-kube-a", "kube"}},
		{name: "patterns replace the default and are anchored", args: []string{"--skipped-namespaces=ops,tmp-.*"}, auto: true,
			skipped: []string{"ops", "tmp-1"}, notSkipped: []string{"kube-system", "devops", "ops-1"}},
		{name: "repeated flags add up", args: []string{"--skipped-namespaces=a", "--skipped-namespaces=b"}, auto: true,
			skipped: []string{"a", "b"}, notSkipped: []string{"kube-system"}},
		{name: "auto-propagation can be turned off", args: []string{"--namespace-auto-propagation=false"},
			skipped: []string{"kube-system"}},
		{name: "an invalid pattern is a flag error", args: []string{"--skipped-namespaces=("}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := render.DefaultOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			bindRenderFlags(fs, &o)
			err := fs.Parse(tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if o.NamespaceAutoPropagation != tc.auto {
				t.Errorf("NamespaceAutoPropagation = %v, want %v", o.NamespaceAutoPropagation, tc.auto)
			}
			matches := func(ns string) bool {
				return slices.ContainsFunc(o.SkippedNamespaces, func(re *regexp.Regexp) bool { return re.MatchString(ns) })
			}
			for _, ns := range tc.skipped {
				if !matches(ns) {
					t.Errorf("%s should be skipped", ns)
				}
			}
			for _, ns := range tc.notSkipped {
				if matches(ns) {
					t.Errorf("%s should not be skipped", ns)
				}
			}
		})
	}
}

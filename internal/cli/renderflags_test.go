package cli

import (
	"testing"

	"github.com/spf13/cobra"
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

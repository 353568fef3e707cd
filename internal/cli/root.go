// Package cli holds propagit's cobra commands. Commands parse flags, call the
// pipeline stages and print; they hold no business rules.
package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/termsafe"
)

// ExitError carries a process exit code through cobra (for example
// `diff --exit-code` exits 1 on a difference without being an error).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// NewRootCommand builds the propagit command tree.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "propagit",
		Short: "GitOps for many Kubernetes clusters with Karmada's policy model",
		Long: `propagit reads Kubernetes manifests and Karmada-compatible policies
(PropagationPolicy, ClusterPropagationPolicy, OverridePolicy,
ClusterOverridePolicy, Cluster) from Git, decides what each member cluster
gets, and applies it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newVersionCommand(),
		newRenderCommand(),
		newExplainCommand(),
		newLintCommand(),
		newControllerCommand(),
		newAgentCommand(),
		newStatusCommand(),
		newDashboardCommand(),
		newWaitCommand(),
		newDiffCommand(),
		newVerifyCommand(),
		newJoinCommand(), newUnjoinCommand(),
		newInstallCommand(),
		newUninstallCommand(),
	)
	registerCompletions(root)
	for _, cmd := range root.Commands() {
		// pflag writes a deprecated flag's warning to the flag set's
		// output, which cobra copies to stdout: stderr keeps -o json
		// parseable.
		cmd.Flags().SetOutput(stderr)
	}
	return root
}

// Execute runs the root command and returns the process exit code.
func Execute() int {
	cmd := NewRootCommand(os.Stdout, os.Stderr)
	if err := cmd.Execute(); err != nil {
		code := 2
		if ee, ok := err.(*ExitError); ok {
			code = ee.Code
			if ee.Err == nil {
				return code
			}
		}
		printError(os.Stderr, err)
		return code
	}
	return 0
}

// printError writes a command's error for a person: it can quote a member's
// status, a script's message or a file name from Git, so control
// characters are escaped (newlines kept: load errors list one problem per
// line).
func printError(w io.Writer, err error) {
	fmt.Fprintf(termsafe.NewWriter(w), "error: %v\n", err)
}

package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set at link time: -X github.com/propagit/propagit/internal/cli.version=…
var (
	version = "dev"
	commit  = "unknown"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the propagit version, commit and Kubernetes client version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "propagit %s\ncommit: %s\nkubernetes client: %s\ngo: %s\n",
				version, commit, moduleVersion("k8s.io/client-go"), runtime.Version())
			return nil
		},
	}
}

// moduleVersion returns the version of a dependency compiled into the binary.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}

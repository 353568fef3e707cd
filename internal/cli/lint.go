package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/render"
)

type lintOptions struct {
	sourceOptions
	strict bool
}

func newLintCommand() *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint --source DIR",
		Short: "Warn about what Karmada users trip over",
		Long: `lint loads and renders the source, then warns about:
  - more than one policy selecting one template (only one wins);
  - two override rules writing the same path of one object for one cluster;
  - templates in namespaces that are never propagated (kube-*, karmada-*, …);
  - clusterNames, exclude and targetCluster entries naming no Cluster;
  - override paths that do not exist in the template they target;
  - replica divisions the clusters' capacity cannot satisfy, and dynamic
    division over clusters whose capacity is unknown;
  - Karmada kinds propagit does not implement.
Each finding names the file and line. Exit status: 0, or 1 with --strict when
there are findings; 2 when the source does not load.`,
		Example: `  propagit lint --source ./fleet --strict`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	o.bindFlags(cmd)
	cmd.Flags().BoolVar(&o.strict, "strict", false, "exit 1 when there is any finding")
	return cmd
}

func (o *lintOptions) run(w io.Writer) error {
	set, err := o.load()
	if err != nil {
		return err
	}
	opts, err := o.renderOptions()
	if err != nil {
		return err
	}
	res := render.Render(render.Input{Set: set, Options: opts})
	findings := render.Lint(set, res)
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
	if len(findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return nil
	}
	fmt.Fprintf(w, "%d findings\n", len(findings))
	if o.strict {
		return &ExitError{Code: 1}
	}
	return nil
}

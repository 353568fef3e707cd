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
	failOn string
	lint   render.LintOptions
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
  - Karmada kinds propagit does not implement;
  - SOPS-encrypted objects sent to a Cluster whose propagit.io/age-recipient
    annotation names none of their recipients, and, with
    --require-encrypted-secrets, every Secret that is not encrypted.
Each finding names the file and line and has a severity: error (a template
fails to render for a cluster: an override that does not apply, an object
Kubernetes would refuse; the cluster would keep its current objects),
warning or info.

It also reports what does nothing without failing, the commonest silent
mistakes: a policy or override that selects nothing (with what the fleet
has that is close: "did you mean"), a template no policy sends anywhere,
a field a built-in kind does not have (the API server would drop it), and
a fleet that renders no object at all.

Exit status: 1 when a finding is at least as serious as --fail-on (warning
by default; error; none never fails; --strict is --fail-on info), else 0;
2 when the source does not load.`,
		Example: `  propagit lint --source ./fleet
  propagit lint --source ./fleet --fail-on warning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	o.bindFlags(cmd)
	cmd.Flags().BoolVar(&o.strict, "strict", false, "exit 1 when there is any finding (--fail-on info)")
	cmd.Flags().StringVar(&o.failOn, "fail-on", string(render.SeverityWarning), "exit 1 on findings of this severity or worse: error, warning, info or none")
	cmd.Flags().BoolVar(&o.lint.RequireEncryptedSecrets, "require-encrypted-secrets", false, "report every Secret that is not SOPS-encrypted as an error")
	return cmd
}

func (o *lintOptions) run(w io.Writer) error {
	failOn, err := o.threshold()
	if err != nil {
		return err
	}
	set, err := o.load()
	if err != nil {
		return err
	}
	opts := o.render
	res := render.Render(render.Input{Set: set, Options: opts})
	o.lint.Root = o.source
	findings := render.LintWith(set, res, o.lint)
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
	if len(findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return nil
	}
	counts := map[render.Severity]int{}
	failed := false
	for _, f := range findings {
		counts[f.Severity]++
		failed = failed || f.Severity.AtLeast(failOn)
	}
	fmt.Fprintf(w, "%s (%s, %s, %d info)\n", count(len(findings), "finding"),
		count(counts[render.SeverityError], "error"), count(counts[render.SeverityWarning], "warning"), counts[render.SeverityInfo])
	if failed {
		return &ExitError{Code: 1}
	}
	return nil
}

// threshold is the least severity that fails the lint; "" never fails.
func (o *lintOptions) threshold() (render.Severity, error) {
	if o.strict {
		return render.SeverityInfo, nil
	}
	if o.failOn == "none" {
		return "", nil
	}
	sev, err := render.ParseSeverity(o.failOn)
	if err != nil {
		return "", fmt.Errorf("--fail-on: %w, or none", err)
	}
	return sev, nil
}

// count renders "1 error", "2 errors".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

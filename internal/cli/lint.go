package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/rollout"
)

type lintOptions struct {
	sourceOptions
	strict bool
	failOn string
	output string
	lint   render.LintOptions
}

// lintFormats are the values of lint's -o.
var lintFormats = []string{"text", "json", "sarif"}

func newLintCommand() *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [SOURCE]",
		Short: "Warn about what Karmada users trip over",
		Long: `lint loads and renders SOURCE (or --source; default: the current
folder), then warns about:
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

Findings about a field point at the field's line: the misspelled entry of
clusterNames, the selector whose name matches nothing, the overrider whose
path the template does not have (reported in the OverridePolicy, where
the mistake is), an unknown field of a built-in kind or of a custom
resource whose CustomResourceDefinition is in the fleet (checked against
its schema). A Helm chart (a folder with Chart.yaml, or a file with
{{ .Values }}-style placeholders) is one error: propagit does not render
Helm charts yet; commit the output of helm template instead.

-o json writes the findings as a JSON array of {file, line, severity,
rule, message}; -o sarif writes SARIF 2.1.0, the format GitHub code
scanning reads: uploaded with github/codeql-action/upload-sarif, each
finding shows on its line in the pull request's diff, with no comment
bot and no log to read. Paths are relative to SOURCE (uriBaseId
SRCROOT), so run lint with SOURCE at the repository's root for GitHub
to place them. Each finding has a stable rule id (selects-nothing,
unknown-field, unknown-cluster, override-failed, helm-chart, …) to filter
or suppress by.

Exit status: 1 when a finding is at least as serious as --fail-on (warning
by default; error; none never fails; --strict is --fail-on info), else 0,
whatever the format (in CI, upload the SARIF file even when lint fails);
2 when the source does not load.`,
		Example: `  propagit lint ./fleet
  propagit lint ./fleet --fail-on warning
  propagit lint -o sarif > lint.sarif`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 0, &o.source); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout())
		},
	}
	o.bindFlags(cmd)
	cmd.Flags().BoolVar(&o.strict, "strict", false, "exit 1 when there is any finding (--fail-on info)")
	cmd.Flags().StringVar(&o.failOn, "fail-on", string(render.SeverityWarning), "exit 1 on findings of this severity or worse: error, warning, info or none")
	bindFormat(cmd, &o.output, "text", lintFormats, "output format")
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
	res := render.Render(render.Input{Set: set, Options: opts, Charts: o.charts(set)})
	o.lint.Root = o.source
	o.lint.ReadFile = o.readSourceFile
	findings := append(render.LintWith(set, res, o.lint), rollout.Lint(set, res)...)
	failed := false
	for _, f := range findings {
		failed = failed || f.Severity.AtLeast(failOn)
	}
	switch o.output {
	case "json":
		err = render.WriteLintJSON(w, findings)
	case "sarif":
		err = render.WriteLintSARIF(w, findings, o.source, resolveVersion(version, commit, nil).Version)
	default:
		writeLintText(w, findings)
	}
	if err != nil {
		return err
	}
	if failed {
		return &ExitError{Code: 1}
	}
	return nil
}

// writeLintText writes one "path:line: severity: message" line per
// finding and a count, or "no findings".
func writeLintText(w io.Writer, findings []render.Finding) {
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
	if len(findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	counts := map[render.Severity]int{}
	for _, f := range findings {
		counts[f.Severity]++
	}
	fmt.Fprintf(w, "%s (%s, %s, %d info)\n", count(len(findings), "finding"),
		count(counts[render.SeverityError], "error"), count(counts[render.SeverityWarning], "warning"), counts[render.SeverityInfo])
}

// readSourceFile reads a file of the source by its slash path, for the
// lines of the fields findings are about. It is Git content: the path
// must stay inside the source and the file within the load's file limit.
func (o *lintOptions) readSourceFile(rel string) ([]byte, error) {
	if rel == "" || path.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, fmt.Errorf("%s: not a path inside the source", rel)
	}
	root, err := filepath.Abs(o.source)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenInRoot(root, filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := o.loadOptions().MaxFileBytes
	if limit <= 0 {
		limit = load.DefaultMaxFileBytes
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		return nil, errors.New(rel + ": larger than the file limit")
	}
	return data, err
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

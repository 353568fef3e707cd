package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/render"
)

type explainOptions struct {
	sourceOptions
	namespace string
	output    string
	previous  string
}

func newExplainCommand() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain KIND/NAME [-n NAMESPACE] --source DIR",
		Short: "Explain where one template goes and why",
		Long: `explain shows, for one template: every policy that matched and why one
won; each cluster and whether it was kept or filtered (by which rule); the
replica arithmetic; and each override that changed it, per cluster.

KIND may be a kind (Deployment), kind.group (deployment.apps) or lower case.`,
		Example: `  propagit explain deployment/nginx -n default --source ./fleet
  propagit explain clusterrole/reader --source ./fleet -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.OutOrStdout(), args[0]) },
	}
	o.bindFlags(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the template (ignored for cluster-scoped kinds)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&o.previous, "previous", "", "folder of an earlier render whose placement is the history (claims, replicas, affinity term, evictions)")
	return cmd
}

func (o *explainOptions) run(w io.Writer, ref string) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf(`--output must be "text" or "json", not %q`, o.output)
	}
	set, err := o.load()
	if err != nil {
		return err
	}
	opts := o.render
	in := render.Input{Set: set, Options: opts}
	if o.previous != "" {
		works, err := readRendered(o.previous)
		if err != nil {
			return fmt.Errorf("failed to read --previous: %w", err)
		}
		in.Previous = render.PreviousFromWorks(works)
	}
	res := render.Render(in)
	b, err := findBinding(res.Bindings, ref, o.namespace)
	if err != nil {
		return err
	}
	b = redactSecretChanges(b)
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(render.Explain(b, res.Clusters))
	}
	printExplanation(w, render.Explain(b, res.Clusters))
	return nil
}

// findBinding resolves KIND/NAME against the rendered templates.
func findBinding(bindings []*render.Binding, ref, namespace string) (*render.Binding, error) {
	kindRef, name, ok := strings.Cut(ref, "/")
	if !ok || kindRef == "" || name == "" {
		return nil, fmt.Errorf("want KIND/NAME, got %q", ref)
	}
	kind, group, _ := strings.Cut(kindRef, ".")
	var found []*render.Binding
	for _, b := range bindings {
		if !strings.EqualFold(b.Key.Kind, kind) || b.Key.Name != name || (group != "" && b.Key.Group != group) {
			continue
		}
		if b.Key.Namespace != "" && b.Key.Namespace != namespace {
			continue
		}
		found = append(found, b)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no template %s in namespace %q", ref, namespace)
	case 1:
		return found[0], nil
	}
	var keys []string
	for _, b := range found {
		keys = append(keys, b.Key.String())
	}
	return nil, fmt.Errorf("%s is ambiguous: %s; qualify the kind with its group", ref, strings.Join(keys, ", "))
}

func printExplanation(w io.Writer, e render.Explanation) {
	fmt.Fprintf(w, "%s  (%s)\n\n", e.Template, e.Source)
	if e.Skipped != "" {
		fmt.Fprintf(w, "Not propagated: %s\n", e.Skipped)
		return
	}
	fmt.Fprintln(w, "Policy:")
	if e.Policy == "" {
		fmt.Fprintf(w, "  none: %s\n", e.PolicyReason)
	} else {
		fmt.Fprintf(w, "  %s wins: %s\n", e.Policy, e.PolicyReason)
	}
	if e.Unclaimed != "" {
		fmt.Fprintf(w, "  %s\n", e.Unclaimed)
	}
	for _, c := range e.Candidates {
		fmt.Fprintf(w, "    - %s  (priority %d, %s)\n", c.Policy, c.Priority, c.Match)
	}
	if len(e.DependencyOf) > 0 {
		fmt.Fprintf(w, "  propagated as a dependency of: %s\n", strings.Join(e.DependencyOf, ", "))
	}
	printClusters(w, e)
	if len(e.Steps) > 0 {
		fmt.Fprintln(w, "\nReplicas:")
		for _, s := range e.Steps {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(e.Evictions) > 0 {
		fmt.Fprintln(w, "\nEvictions (failover):")
		for _, ev := range e.Evictions {
			fmt.Fprintf(w, "  %s\n", ev)
		}
	}
	printPlacement(w, e)
}

func printClusters(w io.Writer, e render.Explanation) {
	for _, term := range e.Terms {
		title := "Clusters:"
		if term.AffinityName != "" {
			title = fmt.Sprintf("Clusters (clusterAffinities term %q):", term.AffinityName)
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, c := range term.Clusters {
			fmt.Fprintf(w, "  %-20s %s\n", c.Name, c.Verdict)
		}
		if term.Error != "" {
			fmt.Fprintf(w, "  term failed: %s\n", term.Error)
		}
	}
	if e.ScheduleError != "" {
		fmt.Fprintf(w, "\nScheduling failed: %s\n", e.ScheduleError)
	}
}

func printPlacement(w io.Writer, e render.Explanation) {
	fmt.Fprintln(w, "\nPlacement:")
	if len(e.Targets) == 0 {
		fmt.Fprintln(w, "  none: the template goes to no cluster")
	}
	for _, t := range e.Targets {
		line := t.Cluster
		if t.Replicas != nil {
			line += fmt.Sprintf("  replicas %d", *t.Replicas)
		}
		if t.Suspended {
			line += "  (dispatching suspended: the member is not touched)"
		}
		switch {
		case t.Error != "" && t.Kept != "":
			line += "  NOT RENDERED (" + t.Kept + "): " + t.Error
		case t.Error != "":
			line += "  NOT RENDERED: " + t.Error
		case t.Kept != "":
			line += "  (" + t.Kept + ")"
		}
		fmt.Fprintf(w, "  %s\n", line)
		for _, c := range t.Changes {
			fmt.Fprintf(w, "      %s\n", c)
		}
	}
}

// redactSecretChanges returns b, or for a Secret a copy whose override
// changes show markers instead of the values they write.
func redactSecretChanges(b *render.Binding) *render.Binding {
	if b.Key.Group != "" || b.Key.Kind != "Secret" {
		return b
	}
	cp := *b
	cp.Targets = make([]*render.Target, len(b.Targets))
	for i, t := range b.Targets {
		tc := *t
		if t.Overrides != nil { // shared with other clusters: redact a copy
			res := *t.Overrides
			res.Changes = make([]override.Change, len(t.Overrides.Changes))
			for j, c := range t.Overrides.Changes {
				res.Changes[j] = diff.RedactChange(c)
			}
			tc.Overrides = &res
		}
		cp.Targets[i] = &tc
	}
	return &cp
}

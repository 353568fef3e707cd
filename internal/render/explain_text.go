package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/termsafe"
)

// WriteExplanation prints e as `propagit explain` shows it: the policy
// and why it won, the clusters and each one's verdict, the replicas, the
// evictions and the placement with what the overrides changed. Names,
// reasons and verdicts come from Git: control characters are escaped
// (termsafe).
func WriteExplanation(w io.Writer, e Explanation) {
	w = termsafe.NewWriter(w) // names, reasons and verdicts come from Git
	fmt.Fprintf(w, "%s  (%s)\n\n", workv1alpha1.DisplayKey(e.Template), e.Source)
	if e.Skipped != "" {
		fmt.Fprintf(w, "Not propagated: %s\n", e.Skipped)
		return
	}
	if c := e.Chart; c != nil {
		fmt.Fprintln(w, "Helm chart:")
		fmt.Fprintf(w, "  rendered by %s from %s (chart %s)\n", workv1alpha1.DisplayKey(c.HelmChart), c.Template, c.Release)
		for _, cluster := range slices.Sorted(maps.Keys(c.Values)) {
			fmt.Fprintf(w, "  %s values: %s\n", cluster, strings.Join(c.Values[cluster], "; "))
		}
		for _, cluster := range slices.Sorted(maps.Keys(c.Failed)) {
			fmt.Fprintf(w, "  %s: %s; it keeps what it runs\n", cluster, c.Failed[cluster])
		}
		fmt.Fprintln(w)
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
		fmt.Fprintf(w, "  propagated as a dependency of: %s\n", strings.Join(displayKeys(e.DependencyOf), ", "))
	}
	writeClusters(w, e)
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
	writePlacement(w, e)
	if r := e.Rollout; r != nil {
		fmt.Fprintln(w, "\nRollout:")
		var waves []string
		for _, wv := range r.Waves {
			waves = append(waves, wv.Name+": "+strings.Join(wv.Clusters, ", "))
		}
		fmt.Fprintf(w, "  %s rolls a new revision out in waves: %s (on failure: %s)\n", r.Policy, strings.Join(waves, " → "), r.OnFailure)
	}
}

func writeClusters(w io.Writer, e Explanation) {
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

func writePlacement(w io.Writer, e Explanation) {
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

// displayKeys spells keys stored in their String form as messages do.
func displayKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = workv1alpha1.DisplayKey(k)
	}
	return out
}

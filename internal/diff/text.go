package diff

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Text renders the report for a terminal: the summary table, moves,
// deletions and warnings, then every cluster's diffs. Control characters
// from the input are shown escaped, never sent to the terminal.
func (r *Report) Text() string { return terminalSafe(r.text()) }

func (r *Report) text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "propagit diff %s → %s\n\n", r.Base, r.Head)
	if len(r.Clusters) == 0 {
		sb.WriteString(r.unchangedText("No differences: every cluster receives the same objects.") + "\n")
		r.textSafety(&sb)
		r.textWarnings(&sb)
		return sb.String()
	}
	fmt.Fprintf(&sb, "%s.\n\n", r.summaryLine())
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tADDED\tCHANGED\tREMOVED\tREPLICAS")
	for _, g := range r.groups() {
		c := g.Cluster
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", g.title(func(s string) string { return s }), c.Added, c.Changed, c.Removed, replicaText(c.Replicas))
	}
	_ = tw.Flush()
	if r.UnchangedClusters > 0 {
		fmt.Fprintf(&sb, "(%s unchanged)\n", plural(r.UnchangedClusters, "other cluster"))
	}
	if len(r.Moves) > 0 {
		sb.WriteString("\nMoved:\n")
		for _, m := range r.Moves {
			fmt.Fprintf(&sb, "  %s moved from %s to %s\n", label(m.Ref), m.From, m.To)
		}
	}
	if len(r.Deletions) > 0 {
		sb.WriteString("\nDeleted:\n")
		for _, d := range r.Deletions {
			fmt.Fprintf(&sb, "  This change deletes %s from %s: %s.\n", label(d.Ref), plural(len(d.Clusters), "cluster"),
				listNames(d.Clusters, maxListed, func(s string) string { return s }))
		}
	}
	if len(r.Waves) > 0 {
		sb.WriteString("\nRollout waves:\n")
		for _, p := range r.Waves {
			fmt.Fprintf(&sb, "  %s: %s (on failure: %s)\n", p.Policy, p.waveLine(func(s string) string { return s }), p.OnFailure)
		}
	}
	if len(r.PruneHolds) > 0 {
		sb.WriteString("\nPrune guard:\n  " + pruneHoldNote(r.PruneHolds, func(s string) string { return s }) + "\n")
	}
	r.textSafety(&sb)
	r.textWarnings(&sb)
	for _, g := range r.groups() {
		c := g.Cluster
		fmt.Fprintf(&sb, "\n=== %s: %s ===\n", g.title(func(s string) string { return s }), c.counts())
		for _, o := range c.Objects {
			fmt.Fprintf(&sb, "\n%s %s %s%s\n", o.sign(), label(o.Ref), o.Change, o.moveNote(func(s string) string { return s }))
			if o.Sealed != "" {
				sb.WriteString(o.Sealed + "\n")
			}
			sb.WriteString(o.Diff)
		}
	}
	return sb.String()
}

func (r *Report) textWarnings(sb *strings.Builder) {
	if len(r.Warnings) == 0 {
		return
	}
	sb.WriteString("\nWarnings (head):\n")
	for _, w := range r.Warnings {
		fmt.Fprintf(sb, "  %s\n", w.String())
	}
}

// String renders "path:line: template on cluster: message".
func (w Warning) String() string {
	s := workv1alpha1.DisplayKey(w.Template)
	if w.Cluster != "" {
		s += " on " + w.Cluster
	}
	if w.Source != "" {
		s = w.Source + ": " + s
	}
	return s + ": " + w.Message
}

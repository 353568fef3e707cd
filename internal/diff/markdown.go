package diff

import (
	"fmt"
	"html"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Marker is the first line of the markdown output, invisible once rendered:
// CI jobs find the comment they posted before by it and update it.
const Marker = "<!-- propagit-diff -->"

// MarkdownLimit is the most characters GitHub accepts in one comment.
const MarkdownLimit = 65536

// Markdown renders the report as a pull-request comment: the marker, the
// summary table, moves, deletions and warnings, then one collapsible
// section per cluster. The output stays within limit bytes (and so within
// limit characters): the largest sections lose their last object diffs
// first, and each cut is stated where it happened.
func (r *Report) Markdown(limit int) string {
	head := r.markdownHead()
	groups := r.groups()
	sections := make([]section, len(groups))
	for i, g := range groups {
		sections[i] = clusterSection(g)
	}
	return fit(head, sections, limit)
}

func (r *Report) markdownHead() string {
	var sb strings.Builder
	sb.WriteString(Marker + "\n### propagit diff\n\n")
	fmt.Fprintf(&sb, "**base** %s → **head** %s", code(r.Base.String()), code(r.Head.String()))
	if len(r.Clusters) == 0 {
		sb.WriteString(": " + r.unchangedText("no differences, every cluster receives the same objects.") + "\n")
		r.markdownSafety(&sb)
		r.markdownWarnings(&sb)
		return sb.String()
	}
	fmt.Fprintf(&sb, ": %s.\n\n", r.summaryLine())
	sb.WriteString("| Cluster | Added | Changed | Removed | Replicas before→after |\n| :-- | --: | --: | --: | :-: |\n")
	for _, g := range r.groups() {
		c := g.Cluster
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %s |\n", g.title(codeCell), c.Added, c.Changed, c.Removed, replicaText(c.Replicas))
	}
	if r.UnchangedClusters > 0 {
		fmt.Fprintf(&sb, "\n%s unchanged.\n", plural(r.UnchangedClusters, "other cluster"))
	}
	if len(r.Moves) > 0 {
		sb.WriteString("\n**Moved**\n\n")
		for _, m := range r.Moves {
			fmt.Fprintf(&sb, "- %s moved from %s to %s\n", code(label(m.Ref)), code(m.From), code(m.To))
		}
	}
	if len(r.Deletions) > 0 {
		sb.WriteString("\n**Deleted**\n\n")
		for _, d := range r.Deletions {
			fmt.Fprintf(&sb, "- :warning: This change deletes %s from %s: %s.\n", code(label(d.Ref)),
				plural(len(d.Clusters), "cluster"), listNames(d.Clusters, maxListed, code))
		}
	}
	if len(r.Waves) > 0 {
		sb.WriteString("\n**Rollout waves**\n\n")
		for _, p := range r.Waves {
			fmt.Fprintf(&sb, "- %s: %s (on failure: %s)\n", code(p.Policy), p.waveLine(code), p.OnFailure)
		}
	}
	if len(r.PruneHolds) > 0 {
		sb.WriteString("\n**Prune guard**\n\n- :octagonal_sign: " + pruneHoldNote(r.PruneHolds, code) + "\n")
	}
	r.markdownSafety(&sb)
	r.markdownWarnings(&sb)
	sb.WriteString("\n")
	return sb.String()
}

func (r *Report) markdownWarnings(sb *strings.Builder) {
	if len(r.Warnings) == 0 {
		return
	}
	sb.WriteString("\n**Warnings (head)**\n\n")
	for _, w := range r.Warnings {
		where := code(workv1alpha1.DisplayKey(w.Template))
		if w.Cluster != "" {
			where += " on " + code(w.Cluster)
		}
		if w.Source != "" {
			where = code(w.Source) + ": " + where
		}
		fmt.Fprintf(sb, "- %s: %s\n", where, mdText(w.Message))
	}
}

// clusterSection renders one cluster as a <details> block whose items are
// its objects.
func clusterSection(g clusterGroup) section {
	c := g.Cluster
	s := section{
		summary: fmt.Sprintf("<details>\n<summary><b>%s</b>: %s", g.title(func(n string) string { return html.EscapeString(oneLine(n)) }), c.counts()),
		close:   "</details>\n\n",
	}
	for _, o := range c.Objects {
		var sb strings.Builder
		fmt.Fprintf(&sb, "**%s** %s%s\n\n", o.Change, code(label(o.Ref)), o.moveNote(code))
		if o.Sealed != "" {
			fmt.Fprintf(&sb, "%s\n\n", mdText(o.Sealed))
		}
		if o.Diff != "" {
			fence := fenceFor(o.Diff)
			fmt.Fprintf(&sb, "%sdiff\n%s%s\n\n", fence, terminalSafe(o.Diff), fence)
		}
		s.items = append(s.items, sb.String())
		s.labels = append(s.labels, label(o.Ref))
	}
	return s
}

// code renders s as inline code, with a fence longer than any backtick run
// inside it.
func code(s string) string {
	s = oneLine(s)
	n := longestRun(s, '`')
	if n == 0 {
		return "`" + s + "`"
	}
	f := strings.Repeat("`", n+1)
	return f + " " + s + " " + f
}

// fenceFor returns a code fence longer than any backtick run in s.
func fenceFor(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

package diff

import (
	"fmt"
	"html"
	"path"
	"strconv"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// RenderErrorText is what the diff says of a (template, cluster) pair that
// failed to render and keeps what it had.
const RenderErrorText = "render error — the cluster keeps its current objects"

// RenderError is a (template, cluster) pair that fails to render at head.
// It is never a deletion: the cluster keeps the objects it has.
type RenderError struct {
	// Source is "path:line" of the template, relative to the repository.
	Source   string `json:"source"`
	Template string `json:"template"`
	Cluster  string `json:"cluster"`
	// Policy and Overrider locate the failing override rule ("" when the
	// rendered object is invalid); Path is the invalid field, if any.
	Policy    string `json:"policy,omitempty"`
	Rule      int    `json:"rule"`
	Overrider string `json:"overrider,omitempty"`
	Path      string `json:"path,omitempty"`
	Message   string `json:"message"`
	// Kept is false when the base recorded nothing for the pair: the
	// cluster then gets nothing for the template.
	Kept bool `json:"kept"`
}

// Unclaimed is a template no policy selects at head that keeps running
// where the base placed it.
type Unclaimed struct {
	Source   string `json:"source"`
	Template string `json:"template"`
	// Policy is the policy that claimed it at base.
	Policy   string   `json:"policy,omitempty"`
	Clusters []string `json:"clusters"`
}

// Orphaned is an object of a template removed at head that stays on its
// clusters, no longer managed by propagit: its labels and annotations are
// removed, the object is not deleted.
type Orphaned struct {
	Ref
	Clusters []string `json:"clusters"`
	// Reason is render.OrphanPreserved or render.OrphanPruneDisabled.
	Reason string `json:"reason"`
}

// sourceOf renders a template's source relative to the repository.
func sourceOf(root string, src load.Source) string {
	s := path.Join(root, src.Path)
	if src.Line > 0 {
		s += ":" + strconv.Itoa(src.Line)
	}
	return s
}

func renderErrors(res *render.Result, root string) []RenderError {
	out := []RenderError{}
	if res == nil {
		return out
	}
	for _, e := range res.Errors {
		out = append(out, RenderError{Source: sourceOf(root, e.Source), Template: e.Template.String(), Cluster: e.Cluster,
			Policy: e.Policy, Rule: e.Rule, Overrider: e.Overrider, Path: e.Path, Message: e.Message, Kept: e.Kept})
	}
	return out
}

func unclaimed(res *render.Result, root string) []Unclaimed {
	out := []Unclaimed{}
	if res == nil {
		return out
	}
	for _, u := range res.Unclaimed {
		out = append(out, Unclaimed{Source: sourceOf(root, u.Source), Template: u.Template.String(), Policy: u.Policy, Clusters: u.Clusters})
	}
	return out
}

// orphaned groups the head's orphans by object, and returns the set of
// (cluster, object) pairs they cover: those are not deletions.
func orphaned(res *render.Result) ([]Orphaned, map[string]map[workv1alpha1.ObjectKey]bool) {
	out := []Orphaned{}
	covered := map[string]map[workv1alpha1.ObjectKey]bool{}
	if res == nil {
		return out, covered
	}
	at := map[workv1alpha1.ObjectKey]int{}
	for _, o := range res.Orphans {
		k := workv1alpha1.KeyOf(o.Object)
		if covered[o.Cluster] == nil {
			covered[o.Cluster] = map[workv1alpha1.ObjectKey]bool{}
		}
		covered[o.Cluster][k] = true
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Orphaned{Ref: refOf(k), Reason: o.Reason})
		}
		out[i].Clusters = append(out[i].Clusters, o.Cluster)
	}
	return out, covered
}

// dropOrphaned removes the removals of orphaned objects from entries.
func dropOrphaned(entries []*entry, covered map[workv1alpha1.ObjectKey]bool) []*entry {
	out := entries[:0]
	for _, e := range entries {
		if e.change == Removed && covered[e.key] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// unclaimedText is how one unclaimed template reads.
func (u Unclaimed) text(quote func(string) string) string {
	s := workv1alpha1.DisplayKey(u.Template) + ": " + render.UnclaimedMessage + " (" + listNames(u.Clusters, maxListed, quote) + ")"
	if u.Policy != "" {
		s += "; it was claimed by " + u.Policy
	}
	return s
}

func (e RenderError) where() string {
	s := e.Policy
	if s != "" {
		s += " rule " + strconv.Itoa(e.Rule) + " " + e.Overrider + ": "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s
}

func (e RenderError) verdict() string {
	if e.Kept {
		return RenderErrorText
	}
	return "render error — nothing was recorded for it before, the cluster gets nothing for it"
}

// unchangedText is what a report without object changes says: same, or,
// when objects leave propagit's management, that nothing is deleted.
func (r *Report) unchangedText(same string) string {
	if len(r.Orphaned) == 0 {
		return same
	}
	msg := "nothing is added, changed or deleted; objects stay on their members, no longer managed (below)."
	if same[0] >= 'A' && same[0] <= 'Z' {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg
}

// textSafety renders the render errors, unclaimed templates and orphans.
func (r *Report) textSafety(sb *strings.Builder) {
	if len(r.RenderErrors) > 0 {
		sb.WriteString("\nRender errors (head):\n")
		for _, e := range r.RenderErrors {
			fmt.Fprintf(sb, "  %s: %s on %s: %s: %s%s\n", e.Source, workv1alpha1.DisplayKey(e.Template), e.Cluster, e.verdict(), e.where(), e.Message)
		}
	}
	if len(r.Unclaimed) > 0 {
		sb.WriteString("\nUnclaimed:\n")
		for _, u := range r.Unclaimed {
			fmt.Fprintf(sb, "  %s\n", u.text(func(s string) string { return s }))
		}
	}
	if len(r.Orphaned) > 0 {
		sb.WriteString("\nKept on the members, no longer managed:\n")
		for _, o := range r.Orphaned {
			fmt.Fprintf(sb, "  %s stays on %s (%s): not deleted, propagit's labels and annotations are removed.\n",
				label(o.Ref), listNames(o.Clusters, maxListed, func(s string) string { return s }), o.Reason)
		}
	}
}

// markdownSafety renders the same as textSafety for a pull request.
func (r *Report) markdownSafety(sb *strings.Builder) {
	if len(r.RenderErrors) > 0 {
		sb.WriteString("\n**Render errors (head)**\n\n")
		for _, e := range r.RenderErrors {
			fmt.Fprintf(sb, "- :x: %s: %s on %s: %s: %s\n", code(e.Source), code(workv1alpha1.DisplayKey(e.Template)), code(e.Cluster), e.verdict(),
				html.EscapeString(e.where()+e.Message))
		}
	}
	if len(r.Unclaimed) > 0 {
		sb.WriteString("\n**Unclaimed**\n\n")
		for _, u := range r.Unclaimed {
			fmt.Fprintf(sb, "- %s\n", html.EscapeString(u.text(func(s string) string { return s })))
		}
	}
	if len(r.Orphaned) > 0 {
		sb.WriteString("\n**Kept on the members, no longer managed**\n\n")
		for _, o := range r.Orphaned {
			fmt.Fprintf(sb, "- %s stays on %s (%s): not deleted, propagit's labels and annotations are removed.\n",
				code(label(o.Ref)), listNames(o.Clusters, maxListed, code), o.Reason)
		}
	}
}

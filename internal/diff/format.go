package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Format is an output format of a Report.
type Format string

// The formats Write knows.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	JSON     Format = "json"
)

// Formats are the names ParseFormat accepts, for help and completion.
var Formats = []string{string(Text), string(Markdown), string(JSON)}

// ParseFormat validates a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, Markdown, JSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q: want %s", s, strings.Join(Formats, ", "))
}

// Write formats r onto w.
func Write(w io.Writer, r *Report, f Format) error {
	var s string
	switch f {
	case Text:
		s = r.Text()
	case Markdown:
		s = r.Markdown(MarkdownLimit)
	case JSON:
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("failed to encode the report: %w", err)
		}
		s = string(b) + "\n"
	default:
		return fmt.Errorf("unknown output format %q", f)
	}
	_, err := io.WriteString(w, s)
	return err
}

// label names an object for people, as every message does:
// "Deployment.apps/demo/web", "Namespace/demo" (ObjectKey.Display).
func label(k Ref) string {
	return workv1alpha1.ObjectKey{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}.Display()
}

// String renders "main (a1b2c3d)", "a1b2c3d" or "working tree".
func (r Revision) String() string {
	if r.WorkingTree {
		return "working tree"
	}
	short := workv1alpha1.ShortRevision(r.Hash)
	switch {
	case short == "" && r.Name == "":
		return "unknown revision"
	case short == "":
		return r.Name
	case r.Name == "" || strings.HasPrefix(r.Hash, r.Name):
		return short
	}
	return r.Name + " (" + short + ")"
}

// plural renders "1 cluster", "2 clusters".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// replicaText renders "6→4", or "-" without workloads.
func replicaText(r *Replicas) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%d→%d", r.Before, r.After)
}

// counts renders "0 added, 1 changed, 1 removed".
func (c Cluster) counts() string {
	return fmt.Sprintf("%d added, %d changed, %d removed", c.Added, c.Changed, c.Removed)
}

// listNames joins names with quote around each, eliding after max.
func listNames(names []string, max int, quote func(string) string) string {
	shown := names
	if len(shown) > max {
		shown = shown[:max]
	}
	parts := make([]string, len(shown))
	for i, n := range shown {
		parts[i] = quote(n)
	}
	s := strings.Join(parts, ", ")
	if len(names) > max {
		s += fmt.Sprintf(" and %d more", len(names)-max)
	}
	return s
}

// maxListed is how many cluster names a deletion lists before "and N more".
const maxListed = 10

// summaryLine says how much differs.
func (r *Report) summaryLine() string {
	var added, changed, removed int
	for _, c := range r.Clusters {
		added += c.Added
		changed += c.Changed
		removed += c.Removed
	}
	return fmt.Sprintf("%d added, %d changed, %d removed on %s", added, changed, removed, plural(len(r.Clusters), "cluster"))
}

// moveNote renders " (moved from a)", " (moved to b, identical)" or "",
// quoting the cluster name with quote.
func (o Object) moveNote(quote func(string) string) string {
	switch {
	case o.MovedFrom != "" && o.Diff == "":
		return " (moved from " + quote(o.MovedFrom) + ", identical)"
	case o.MovedFrom != "":
		return " (moved from " + quote(o.MovedFrom) + ")"
	case o.MovedTo != "":
		return " (moved to " + quote(o.MovedTo) + ")"
	}
	return ""
}

// sign is the one-character mark of a change.
func (o Object) sign() string {
	switch o.Change {
	case Added:
		return "+"
	case Removed:
		return "-"
	}
	return "~"
}

package load

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Excerpts are documents copied from documentation with parts left out,
// marked with an ellipsis: a "# ..." comment, a "..." value, or the "..."
// line that ends a YAML document. In an excerpt, a required field that is
// simply absent is taken as elided: the document is not loaded and a
// Finding says so, instead of failing the whole load. (EXPECT.md accepts
// two such corpus files; a document without the marker still fails.)

// endMarkerLines returns the lines (1-based) holding a "..." document end
// marker.
func endMarkerLines(data []byte) []int {
	if !bytes.Contains(data, []byte("...")) {
		return nil
	}
	var out []int
	for line := 1; len(data) > 0; line++ {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte("\n"))
		if string(bytes.TrimRight(l, " \t\r")) == "..." {
			out = append(out, line)
		}
	}
	return out
}

// endMarked reports whether a marker lies in [from, to).
func endMarked(markers []int, from, to int) bool {
	for _, m := range markers {
		if m >= from && m < to {
			return true
		}
	}
	return false
}

// hasEllipsis reports whether a comment or a scalar of n is only an
// ellipsis.
func hasEllipsis(n *yaml.Node) bool {
	if isEllipsisComment(n.HeadComment) || isEllipsisComment(n.LineComment) || isEllipsisComment(n.FootComment) {
		return true
	}
	if n.Kind == yaml.ScalarNode {
		v := strings.TrimSpace(n.Value)
		return v == "..." || v == "…"
	}
	for _, c := range n.Content {
		if hasEllipsis(c) {
			return true
		}
	}
	return false
}

func isEllipsisComment(c string) bool {
	for _, line := range strings.Split(c, "\n") {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if t == "..." || t == "…" {
			return true
		}
	}
	return false
}

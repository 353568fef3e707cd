package load

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// FieldLines returns the line of every field of the object whose Source
// line is line in data (a document, or an item of a List): the field path
// as the strict decoder writes it ("spec.resourceSelectors[0].name") maps
// to the line of its key, or of the list item. Lint uses it to point a
// finding at the field at fault; it parses the file again instead of
// keeping every field's line of every object for the controller's sake.
// It returns nil when no object starts at line (kustomize output, or a
// file changed since it was loaded).
func FieldLines(data []byte, line int) map[string]int {
	docs, _, _ := splitDocuments(data)
	for _, d := range docs {
		if n := objectAt(d, line); n != nil {
			z := &normalizer{}
			plain := z.normalize(n, nil)
			if plain == nil {
				return nil
			}
			out := map[string]int{}
			recordLines(plain, "", out)
			return out
		}
	}
	return nil
}

// objectAt returns d when it starts at line, else the item of a List
// document that does, else nil.
func objectAt(d *yaml.Node, line int) *yaml.Node {
	if d.Line == line {
		return d
	}
	kind := lookup(d, "kind")
	if kind == nil || !strings.HasSuffix(kind.Value, "List") {
		return nil
	}
	for _, item := range items(lookup(d, "items")) {
		if item.Line == line {
			return item
		}
	}
	return nil
}

// recordLines adds the line of every key and list item under n.
func recordLines(n *yaml.Node, path string, out map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := fieldPath(path, n.Content[i].Value)
			if _, seen := out[p]; !seen {
				out[p] = n.Content[i].Line
			}
			recordLines(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := indexPath(path, i)
			out[p] = c.Line
			recordLines(c, p, out)
		}
	}
}

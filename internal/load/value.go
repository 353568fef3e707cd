package load

import (
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// valueOf converts a normalized node into the JSON-compatible value that
// unstructured.Unstructured holds: map[string]any, []any, string, int64,
// float64, bool or nil. Scalars follow YAML 1.2 as kustomize reads them
// (yes/no/on/off are strings); timestamps stay strings. Values JSON cannot
// hold (NaN, infinities, integers beyond int64) are reported.
//
// Scalars in asString (may be nil) are taken as strings whatever their tag.
func valueOf(n *yaml.Node, path *segment, issues *[]issue, asString map[*yaml.Node]bool) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			m[k] = valueOf(n.Content[i+1], path.field(k), issues, asString)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = valueOf(c, path.index(i), issues, asString)
		}
		return s
	case yaml.ScalarNode:
		if asString[n] {
			return n.Value
		}
		v, msg := scalarValue(n)
		if msg != "" {
			*issues = append(*issues, issue{field: path.String(), line: n.Line, msg: msg})
		}
		return v
	}
	return nil
}

// scalarValue resolves one scalar by its YAML tag.
func scalarValue(n *yaml.Node) (any, string) {
	switch n.ShortTag() {
	case "!!null":
		return nil, ""
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return n.Value, ""
		}
		return b, ""
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, ""
		}
		return nil, strconv.Quote(n.Value) + " is not a 64-bit integer"
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, "invalid number " + strconv.Quote(n.Value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, strings.TrimSpace(n.Value) + " cannot be represented in JSON"
		}
		return f, ""
	}
	return n.Value, ""
}

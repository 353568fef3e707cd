package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// issue is a problem found inside one document: the field path, the line of
// the offending node (0: unknown), the message and how grave it is.
type issue struct {
	field string
	line  int
	msg   string
	sev   severity
	// absent, when set, names a field whose absence alone causes the issue
	// (e.g. a missing spec.resourceSelectors); see excerpt.
	absent string
}

// severity says what an issue does to the load.
type severity int

const (
	// sevError fails the load.
	sevError severity = iota
	// sevWarning becomes a Finding; the object loads with the field ignored.
	sevWarning
	// sevSkip becomes a Finding; the document is not loaded. It is used for
	// documents that are evidently not manifests (pseudo-YAML, placeholders,
	// excerpts), which the corpus' EXPECT.md wants accepted.
	sevSkip
)

// maxNodes bounds the nodes a document may expand to through aliases, so a
// "billion laughs" file fails instead of exhausting memory.
const maxNodes = 1 << 21

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// splitDocuments parses a YAML stream into its non-empty documents' top
// nodes. A syntax error ends the stream: the documents before it are
// returned together with the error's line and message.
func splitDocuments(data []byte) (docs []*yaml.Node, errLine int, errMsg string) {
	defer func() {
		if r := recover(); r != nil {
			errLine, errMsg = 1, fmt.Sprintf("invalid YAML: parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, 0, ""
		}
		if err != nil {
			line, msg := parseErrorLine(err.Error())
			return docs, line, "invalid YAML: " + msg
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 && !isNull(n.Content[0]) {
			docs = append(docs, n.Content[0])
		}
	}
}

// parseErrorLine extracts the line from a parser error; errors without one
// are put on line 1.
func parseErrorLine(msg string) (int, string) {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n, msg[len(m[0]):]
		}
	}
	return 1, strings.TrimPrefix(msg, "yaml: ")
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// normalizer rewrites a document into plain mappings, sequences and scalars:
// aliases are expanded, merge keys ("<<") applied and duplicate keys
// reported. Scalars are shared, never modified.
type normalizer struct {
	visited int
	issues  []issue
}

func (z *normalizer) add(field string, line int, format string, args ...any) {
	z.issues = append(z.issues, issue{field: field, line: line, msg: fmt.Sprintf(format, args...)})
}

// normalize returns the plain form of n, or nil when the node budget is spent.
func (z *normalizer) normalize(n *yaml.Node, path string) *yaml.Node {
	z.visited++
	if z.visited == maxNodes {
		z.add(path, n.Line, "document too large: more than %d nodes after expanding aliases", maxNodes)
	}
	if z.visited >= maxNodes {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			z.add(path, n.Line, "unknown alias %q", n.Value)
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
		}
		return z.normalize(n.Alias, path)
	case yaml.MappingNode:
		return z.mapping(n, path)
	case yaml.SequenceNode:
		out := *n
		out.Content = make([]*yaml.Node, 0, len(n.Content))
		for i, c := range n.Content {
			item := z.normalize(c, indexPath(path, i))
			if item == nil {
				return nil
			}
			out.Content = append(out.Content, item)
		}
		return &out
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line}
		}
		return z.normalize(n.Content[0], path)
	}
	return n
}

// mapping normalizes a mapping node: explicit keys first (duplicates
// reported), then the keys of merged mappings that are not set explicitly.
func (z *normalizer) mapping(n *yaml.Node, path string) *yaml.Node {
	out := *n
	out.Content = make([]*yaml.Node, 0, len(n.Content))
	seen := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := z.normalize(n.Content[i], path)
		if k == nil {
			return nil
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if k.Kind != yaml.ScalarNode {
			z.add(path, k.Line, "invalid YAML: mapping keys must be scalars (a {{ template }} placeholder?)")
			continue
		}
		field := fieldPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			z.add(field, k.Line, "duplicate key %q (first at line %d)", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		v := z.normalize(n.Content[i+1], field)
		if v == nil {
			return nil
		}
		out.Content = append(out.Content, k, v)
	}
	for _, m := range merges {
		if !z.merge(&out, m, seen, path) {
			return nil
		}
	}
	return &out
}

// merge appends to out the pairs of the mapping(s) m refers to whose keys
// are not in seen. Earlier sources win over later ones, as YAML specifies.
func (z *normalizer) merge(out *yaml.Node, m *yaml.Node, seen map[string]int, path string) bool {
	src := z.normalize(m, path)
	if src == nil {
		return false
	}
	sources := []*yaml.Node{src}
	if src.Kind == yaml.SequenceNode {
		sources = src.Content
	}
	for _, s := range sources {
		if s.Kind != yaml.MappingNode {
			z.add(path, s.Line, "merge key \"<<\" needs a mapping or a list of mappings")
			continue
		}
		for i := 0; i+1 < len(s.Content); i += 2 {
			k := s.Content[i]
			if _, dup := seen[k.Value]; dup {
				continue
			}
			seen[k.Value] = k.Line
			out.Content = append(out.Content, k, s.Content[i+1])
		}
	}
	return true
}

// fieldPath appends a mapping key to a dotted path.
func fieldPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to a path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// keyPath appends a free-form map key (a label name, …) to a path.
func keyPath(path, key string) string {
	return path + "[" + key + "]"
}

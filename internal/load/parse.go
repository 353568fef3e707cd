package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
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
// "billion laughs" file fails instead of exhausting memory; maxDepth bounds
// nesting (an alias can refer to its own ancestor).
const (
	maxNodes = 1 << 20
	maxDepth = 1000
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// splitDocuments parses a YAML stream into its non-empty documents' top
// nodes. A syntax error ends the stream: the documents before it are
// returned together with the error's line and message.
func splitDocuments(data []byte) (docs []*yaml.Node, errLine int, errMsg string) {
	return splitDocumentsMax(data, -1)
}

// splitDocumentsMax is splitDocuments that stops decoding once it holds
// more than maxDocs documents (no bound when negative).
func splitDocumentsMax(data []byte, maxDocs int) (docs []*yaml.Node, errLine int, errMsg string) {
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
			line, msg := parseErrorLine(err.Error(), data)
			return docs, offendingLine(data, line, msg), "invalid YAML: " + withHint(msg)
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 && !isNull(n.Content[0]) {
			docs = append(docs, n.Content[0])
		}
		if maxDocs >= 0 && len(docs) > maxDocs {
			return docs, 0, ""
		}
	}
}

// parserProblems are the messages of go-yaml's parser (as opposed to its
// scanner). For them go-yaml reports the 0-based line where the enclosing
// construct starts; one is added to make it 1-based.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>", "found undefined tag handle",
	"did not find expected node content", "did not find expected '-' indicator", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "found duplicate %YAML directive",
	"found incompatible YAML document", "found duplicate %TAG directive",
}

var unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// parseErrorLine extracts the line from a parser error; errors without one
// are put on the line that uses an unknown anchor, or on line 1.
func parseErrorLine(msg string, data []byte) (int, string) {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			rest := msg[len(m[0]):]
			if slices.Contains(parserProblems, rest) {
				n++
			}
			return n, rest
		}
	}
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "*"+m[1]) {
				return i + 1, strings.TrimPrefix(msg, "yaml: ")
			}
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
	depth   int
	issues  []issue
	// limit bounds visited (maxNodes when 0). When it is the source's
	// budget rather than maxNodes (budgeted), reaching it records
	// overBudget (the node's line) instead of an issue.
	limit      int
	budgeted   bool
	overBudget int
}

func (z *normalizer) max() int {
	if z.limit > 0 {
		return z.limit
	}
	return maxNodes
}

func (z *normalizer) add(at *segment, line int, format string, args ...any) {
	z.issues = append(z.issues, issue{field: at.String(), line: line, msg: fmt.Sprintf(format, args...)})
}

// normalize returns the plain form of n, or nil when the node budget is spent.
func (z *normalizer) normalize(n *yaml.Node, path *segment) *yaml.Node {
	z.visited++
	z.depth++
	defer func() { z.depth-- }()
	switch limit := z.max(); {
	case z.visited > limit:
		return nil
	case z.visited == limit && z.budgeted:
		z.overBudget = max(n.Line, 1)
		return nil
	case z.visited == limit:
		z.add(nil, n.Line, "document too large: more than %d nodes after expanding aliases", limit)
		return nil
	case z.depth > maxDepth:
		z.visited = limit + 1
		z.add(nil, n.Line, "document nested more than %d levels deep (an alias inside its own anchor?)", maxDepth)
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
			item := z.normalize(c, path.index(i))
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
func (z *normalizer) mapping(n *yaml.Node, path *segment) *yaml.Node {
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
		field := path.field(k.Value)
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
func (z *normalizer) merge(out *yaml.Node, m *yaml.Node, seen map[string]int, path *segment) bool {
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

// segment is one step of a field path, linked to its parent, so that walks
// over large documents build path strings only when they report something.
// A nil *segment is the document root.
type segment struct {
	parent *segment
	key    string
	idx    int
	isIdx  bool
}

func (s *segment) field(key string) *segment { return &segment{parent: s, key: key} }

func (s *segment) index(i int) *segment { return &segment{parent: s, idx: i, isIdx: true} }

// String renders the path as fieldPath and indexPath would.
func (s *segment) String() string {
	if s == nil {
		return ""
	}
	if s.isIdx {
		return indexPath(s.parent.String(), s.idx)
	}
	return fieldPath(s.parent.String(), s.key)
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

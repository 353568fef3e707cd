package load

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

// go-yaml v3 puts a syntax error at the line where the enclosing construct
// starts when it knows one (a block mapping opened lines before the stray
// "- item"); v2, the same parser, puts it at the offending token. For an
// unclosed bracket or quote the opening line is the helpful one, so those
// keep v3's line.
var keepOpeningLine = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found unexpected end of stream", "did not find expected node content",
}

// offendingLine returns the line of the token that broke a stream v3
// failed to parse with msg at line; line when v2 disagrees on the problem.
func offendingLine(data []byte, line int, msg string) (out int) {
	if slices.Contains(keepOpeningLine, msg) {
		return line
	}
	defer func() {
		if recover() != nil {
			out = line
		}
	}()
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	for {
		var d discardYAML
		err := dec.Decode(&d)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) || !strings.HasPrefix(err.Error(), "yaml: line ") {
			return line
		}
		n, rest := parseErrorLine(err.Error(), nil)
		if rest != msg {
			return line
		}
		// v2 counts a parser problem's line from 0 (parseErrorLine adds
		// one for parser problems, as v3 needs for its context line).
		return n
	}
}

// syntaxHints say what to do about the commonest syntax errors of
// hand-written manifests.
var syntaxHints = map[string]string{
	"did not find expected key":                       "check this line's indentation against the lines above it",
	"found a tab character that violates indentation": "indent with spaces, not tabs",
	"mapping values are not allowed in this context":  `quote a value that holds ": "`,
}

// withHint appends the hint for msg, if any.
func withHint(msg string) string {
	if h, ok := syntaxHints[msg]; ok {
		return msg + ": " + h
	}
	return msg
}

// discardYAML parses a document and keeps nothing, so that only syntax
// errors surface (no alias expansion, no type errors).
type discardYAML struct{}

func (discardYAML) UnmarshalYAML(func(any) error) error { return nil }

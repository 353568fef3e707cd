package load

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one reason a folder cannot be loaded: where it is, which field
// (a dotted path such as "spec.placement.clusterAffinity.clusterNames[0]",
// empty for problems with a whole document or file) and what is wrong.
type Problem struct {
	Source  Source
	Field   string
	Message string
}

// String renders "path:line: field: message".
func (p Problem) String() string {
	if p.Field == "" {
		return p.Source.String() + ": " + p.Message
	}
	return p.Source.String() + ": " + p.Field + ": " + p.Message
}

// Error is returned by Load when the folder holds any problem. It lists all
// of them, sorted by file and line.
type Error struct {
	Problems []Problem
}

// Error joins the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// sortProblems orders problems by path, then line, keeping the order in
// which problems of one line were found.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Source.Path, b.Source.Path), cmp.Compare(a.Source.Line, b.Source.Line))
	})
}

// problemf builds a Problem with a formatted message.
func problemf(src Source, field, format string, args ...any) Problem {
	return Problem{Source: src, Field: field, Message: fmt.Sprintf(format, args...)}
}

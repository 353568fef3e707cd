package render

import (
	"strings"

	"github.com/propagit/propagit/internal/load"
)

// locator moves a finding from the first line of its document to the line
// of the field at fault. The loader keeps no field lines (the controller
// would hold them for every object), so the file is read again through
// LintOptions.ReadFile and parsed with load.FieldLines, once per object.
type locator struct {
	read  func(path string) ([]byte, error)
	files map[string][]byte
	lines map[load.Source]map[string]int
}

func newLocator(read func(string) ([]byte, error)) *locator {
	return &locator{read: read, files: map[string][]byte{}, lines: map[load.Source]map[string]int{}}
}

// at returns src at the line of field ("spec.resourceSelectors[0].name"),
// or of its nearest parent written in the file; src itself when the
// object's lines are unknown (no reader, kustomize output).
func (l *locator) at(src load.Source, field string) load.Source {
	if l == nil || l.read == nil || src.Line == 0 {
		return src
	}
	lines, done := l.lines[src]
	if !done {
		data, read := l.files[src.Path]
		if !read {
			data, _ = l.read(src.Path) // unreadable: no lines
			l.files[src.Path] = data
		}
		lines = load.FieldLines(data, src.Line)
		l.lines[src] = lines
	}
	for f := field; f != ""; f = parentField(f) {
		if n := lines[f]; n > 0 {
			src.Line = n
			return src
		}
	}
	return src
}

// parentField strips the last step of a field path: ".name" or "[i]".
func parentField(f string) string {
	if i := strings.LastIndexAny(f, ".["); i >= 0 {
		return f[:i]
	}
	return ""
}

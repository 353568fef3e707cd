package load

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	// Only go-git's gitignore pattern parser: no repository is read here.
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	yaml "go.yaml.in/yaml/v3"
)

// IgnoreFile, at the root of the source, lists in gitignore syntax the
// files and folders Load does not read (docs, CI files, Helm charts).
const IgnoreFile = ".propagitignore"

// RenderMarker is the file `propagit render --out` leaves in its output
// folder. A folder below the root that holds it is an earlier render, not
// part of the source: reading it would define every object twice.
const RenderMarker = ".propagit-render"

// readIgnore parses the root's IgnoreFile; nil when there is none.
func readIgnore(cfs *confinedFS) (gitignore.Matcher, []Problem) {
	path := filepath.Join(cfs.root, IgnoreFile)
	if !cfs.Exists(path) || cfs.IsDir(path) {
		return nil, nil
	}
	data, err := cfs.readFile(path)
	switch {
	case errors.Is(err, errOverBudget):
		return nil, nil // the budget reports it
	case err != nil:
		return nil, []Problem{problemf(Source{Path: IgnoreFile}, "", "failed to read file: %v", err)}
	}
	var patterns []gitignore.Pattern
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, nil))
	}
	return gitignore.NewMatcher(patterns), nil
}

// ignored reports whether rel (slash-separated, relative to the root) is
// left out by the ignore file.
func (l *loader) ignored(rel string, isDir bool) bool {
	return l.ignore != nil && l.ignore.Match(strings.Split(rel, "/"), isDir)
}

// earlierRender reports whether a folder's entries hold RenderMarker; the
// root itself is always read.
func earlierRender(rel string, names []string) bool {
	return rel != "" && slices.Contains(names, RenderMarker)
}

// notObjects reports whether no document of a file is a Kubernetes object
// (each is a list, a scalar or a mapping with neither apiVersion nor kind:
// mkdocs.yml, docker-compose.yaml, a CI workflow). A mapping with a merge
// key might get apiVersion from it, so it counts as an object.
func notObjects(docs []*yaml.Node) bool {
	for _, d := range docs {
		if d.Kind == yaml.MappingNode && (lookup(d, "apiVersion") != nil || lookup(d, "kind") != nil || lookup(d, "<<") != nil) {
			return false
		}
	}
	return len(docs) > 0
}

// notObjectsFinding is the notice for a file notObjects skips.
func notObjectsFinding(path string, docs []*yaml.Node) Finding {
	what := "no document is a Kubernetes object"
	if len(docs) == 1 {
		what = "not a Kubernetes object"
	}
	return Finding{Source: Source{Path: path, Line: docs[0].Line},
		Message: fmt.Sprintf("%s (no apiVersion and kind): the file is skipped; list it in %s to silence this", what, IgnoreFile)}
}

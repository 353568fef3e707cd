package load

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errOutside is returned for every access outside the source folder.
var errOutside = errors.New("outside the source folder")

// errReadOnly is returned for every write.
var errReadOnly = errors.New("the source folder is read-only")

// confinedFS is a read-only view of a filesystem that refuses every path
// outside root, symlinks resolved (on disk). krusty builds run on it, so a
// kustomization cannot read anything but the checkout.
//
// With a budget, every file read is charged to it before it is parsed, by
// propagit or by krusty: a file over the limits is refused with
// errOverBudget (the budget holds the problem), and each YAML file read
// through ReadFile (krusty's reads) is parsed once, bounded, so that an
// alias bomb fails here instead of inside kustomize.
type confinedFS struct {
	fs     filesys.FileSystem
	root   string
	budget *budget
	// vetted remembers the YAML files already parsed for the budget.
	vetted map[string]bool
	// resolved remembers resolve's answers: a Load asks about each file
	// several times (check, then its relative path), and resolving is a
	// walk of the tree each time. One Load sees one view of the tree.
	resolved map[string]resolution
}

// resolution is what resolve returned for a path.
type resolution struct {
	full   string
	inside bool
}

// errOverBudget is returned for a read refused by the budget.
var errOverBudget = errors.New("over the source's limits")

var _ filesys.FileSystem = (*confinedFS)(nil)

// newConfinedFS confines fs to the folder root.
func newConfinedFS(fs filesys.FileSystem, root string) (*confinedFS, error) {
	d, f, err := fs.CleanedAbs(root)
	if err != nil {
		return nil, fmt.Errorf("failed to open source folder %q: %w", root, err)
	}
	if f != "" {
		return nil, fmt.Errorf("source %q is not a folder", root)
	}
	return &confinedFS{fs: fs, root: string(d)}, nil
}

// resolve returns the absolute, symlink-free form of path and whether it
// lies inside root. A path that does not exist is judged by its nearest
// existing ancestor, after lexical cleaning.
func (c *confinedFS) resolve(path string) (string, bool) {
	if r, ok := c.resolved[path]; ok {
		return r.full, r.inside
	}
	r := c.resolveUncached(path)
	if c.resolved == nil {
		c.resolved = map[string]resolution{}
	}
	c.resolved[path] = r
	return r.full, r.inside
}

// resolveUncached is resolve without the memory of earlier answers.
func (c *confinedFS) resolveUncached(path string) resolution {
	p := filepath.Clean(path)
	suffix := ""
	for {
		d, f, err := c.fs.CleanedAbs(p)
		if err == nil {
			full := filepath.Join(string(d), f, suffix)
			return resolution{full, within(c.root, full)}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return resolution{p, false}
		}
		suffix = filepath.Join(filepath.Base(p), suffix)
		p = parent
	}
}

// within reports whether p is root or lies under it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (c *confinedFS) check(path string) error {
	if _, ok := c.resolve(path); !ok {
		return fmt.Errorf("%s: %w", path, errOutside)
	}
	return nil
}

// Create refuses: the view is read-only.
func (c *confinedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }

// Mkdir refuses: the view is read-only.
func (c *confinedFS) Mkdir(string) error { return errReadOnly }

// MkdirAll refuses: the view is read-only.
func (c *confinedFS) MkdirAll(string) error { return errReadOnly }

// RemoveAll refuses: the view is read-only.
func (c *confinedFS) RemoveAll(string) error { return errReadOnly }

// WriteFile refuses: the view is read-only.
func (c *confinedFS) WriteFile(string, []byte) error { return errReadOnly }

// Open opens a file inside root.
func (c *confinedFS) Open(path string) (filesys.File, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.fs.Open(path)
}

// IsDir reports whether path is a folder inside root.
func (c *confinedFS) IsDir(path string) bool {
	return c.check(path) == nil && c.fs.IsDir(path)
}

// ReadDir lists a folder inside root.
func (c *confinedFS) ReadDir(path string) ([]string, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.fs.ReadDir(path)
}

// CleanedAbs resolves a path inside root.
func (c *confinedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if err := c.check(path); err != nil {
		return "", "", err
	}
	return c.fs.CleanedAbs(path)
}

// Exists reports whether path exists inside root.
func (c *confinedFS) Exists(path string) bool {
	return c.check(path) == nil && c.fs.Exists(path)
}

// Glob returns the matches of pattern that lie inside root.
func (c *confinedFS) Glob(pattern string) ([]string, error) {
	matches, err := c.fs.Glob(pattern)
	if err != nil {
		return nil, err
	}
	out := matches[:0]
	for _, m := range matches {
		if c.check(m) == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// ReadFile reads a file inside root, within the budget; a YAML file is
// also parsed once against it.
func (c *confinedFS) ReadFile(path string) ([]byte, error) {
	data, err := c.readFile(path)
	if err != nil || c.budget == nil {
		return data, err
	}
	rel := c.rel(path)
	if c.vetted[rel] {
		return data, nil
	}
	c.vetted[rel] = true
	docs, _, _ := splitDocumentsMax(data, c.budget.documentsLeft())
	for _, d := range docs {
		z := c.budget.normalizer()
		z.normalize(d, nil)
		if z.visited >= z.max() && len(z.issues) > 0 {
			// Cut short (too many nodes, too deep): kustomize would not be.
			c.budget.fail(Source{Path: rel, Line: max(z.issues[0].line, d.Line)}, z.issues[0].msg)
		}
		if !c.budget.charge(Source{Path: rel, Line: d.Line}, z) {
			return nil, fmt.Errorf("%s: %w", rel, errOverBudget)
		}
	}
	return data, nil
}

// readFile reads a file inside root, within the budget, without parsing it.
func (c *confinedFS) readFile(path string) ([]byte, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	if c.budget == nil {
		return c.fs.ReadFile(path)
	}
	f, err := c.fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	rel := c.rel(path)
	if !c.budget.file(rel, fi.Size()) {
		return nil, fmt.Errorf("%s: %w", rel, errOverBudget)
	}
	// The size can change between Stat and the read: read one byte more
	// than allowed to notice.
	data, err := io.ReadAll(io.LimitReader(f, c.budget.opts.MaxFileBytes+1))
	if err == nil && int64(len(data)) > c.budget.opts.MaxFileBytes && !c.budget.file(rel, int64(len(data))) {
		return nil, fmt.Errorf("%s: %w", rel, errOverBudget)
	}
	return data, err
}

// rel is path relative to root, slash-separated.
func (c *confinedFS) rel(path string) string {
	full, _ := c.resolve(path)
	r, err := filepath.Rel(c.root, full)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// Walk walks a folder inside root.
func (c *confinedFS) Walk(path string, walkFn filepath.WalkFunc) error {
	if err := c.check(path); err != nil {
		return err
	}
	return c.fs.Walk(path, walkFn)
}

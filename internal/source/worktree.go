package source

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// workingTree copies the files under dir of the working tree on disk into
// dst: what `git add -A` would commit, that is tracked files as they are on
// disk plus untracked files that .gitignore (or .git/info/exclude) does not
// exclude. Symbolic links, nested repositories and .git are skipped.
func (r *Repository) workingTree(dir string, dst FileWriter) (Revision, error) {
	if r.workdir == "" {
		return Revision{}, fmt.Errorf("%s has no working tree (it is bare or remote): name a revision instead of %q", r.location, WorkingTree)
	}
	out := Revision{Name: WorkingTree, WorkingTree: true}
	if head, err := r.repo.Head(); err == nil {
		out.Hash = head.Hash().String()
	}
	root := filepath.Join(r.workdir, filepath.FromSlash(dir))
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return out, fmt.Errorf("failed to find folder %q in the working tree of %s: %w", dir, r.location, ErrFolderNotFound)
	}
	w, err := r.newWalker(root, dst)
	if err != nil {
		return out, err
	}
	if err := filepath.WalkDir(root, w.visit); err != nil {
		return out, fmt.Errorf("failed to read the working tree: %w", err)
	}
	return out, nil
}

// walker decides, file by file, what of the working tree Git would see.
type walker struct {
	workdir, root string
	tracked       map[string]bool // tracked files and their parent folders
	ignore        gitignore.Matcher
	dst           FileWriter
}

func (r *Repository) newWalker(root string, dst FileWriter) (*walker, error) {
	w := &walker{workdir: r.workdir, root: root, tracked: map[string]bool{}, dst: dst}
	if idx, err := r.repo.Storer.Index(); err == nil {
		for _, e := range idx.Entries {
			for p := e.Name; p != "." && p != "/" && p != ""; p = parentDir(p) {
				w.tracked[p] = true
			}
		}
	}
	patterns, err := gitignore.ReadPatterns(osfs.New(r.workdir), nil)
	if err != nil {
		return nil, fmt.Errorf("failed to read .gitignore files: %w", err)
	}
	w.ignore = gitignore.NewMatcher(patterns)
	return w, nil
}

// parentDir returns the slash-separated parent of p ("" at the top).
func parentDir(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (w *walker) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(w.workdir, p)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	if d.IsDir() {
		if p == w.root {
			return nil
		}
		if d.Name() == ".git" || w.skipDir(p, rel) {
			return filepath.SkipDir
		}
		return nil
	}
	if !d.Type().IsRegular() || (!w.tracked[rel] && w.ignore.Match(strings.Split(rel, "/"), false)) {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	inner, err := filepath.Rel(w.root, p)
	if err != nil {
		return err
	}
	return w.dst.WriteFile("/"+filepath.ToSlash(inner), data)
}

// skipDir reports whether a folder is ignored (and holds nothing tracked)
// or is another repository (a submodule's checkout).
func (w *walker) skipDir(p, rel string) bool {
	if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
		return true
	}
	return !w.tracked[rel] && w.ignore.Match(strings.Split(rel, "/"), true)
}

package source

import (
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitTree resolves rev and copies its tree under dir into dst. Symbolic
// links and submodules are skipped: their targets are not part of the tree.
func (r *Repository) commitTree(rev, dir string, dst FileWriter) (Revision, error) {
	hash, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return Revision{}, fmt.Errorf("failed to resolve revision %q in %s: %w%s", rev, r.location, err, r.shallowHint())
	}
	commit, err := readCommit(r.repo.Storer, *hash)
	if err != nil {
		return Revision{}, fmt.Errorf("failed to read commit %s: %w", hash, err)
	}
	out := Revision{Name: rev, Hash: hash.String()}
	tree, err := commit.Tree()
	if err != nil {
		return out, fmt.Errorf("failed to read the tree of %s: %w", out.Short(), err)
	}
	if dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			if errors.Is(err, object.ErrDirectoryNotFound) {
				err = ErrFolderNotFound
			}
			return out, fmt.Errorf("failed to find folder %q in %s: %w", dir, out.Short(), err)
		}
	}
	if err := r.copyFiles(tree, dir, dst); err != nil {
		return out, fmt.Errorf("failed to read the files of %s: %w", out.Short(), err)
	}
	return out, nil
}

// copyFiles copies the files of tree into dst, within the limits. It walks
// tree entries, which name each file's blob, and reads a blob only when
// dst (a BlobWriter) does not hold it already.
func (r *Repository) copyFiles(tree *object.Tree, dir string, dst FileWriter) error {
	bw, _ := dst.(BlobWriter)
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	var total int64
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !entry.Mode.IsFile() || entry.Mode == filemode.Symlink {
			continue // folders are walked into; links and submodules are not files of this tree
		}
		p := "/" + name
		if bw != nil {
			if size, have := bw.Blob(p, entry.Hash); have {
				total += size
				if err := r.limits.check(path.Join(dir, name), size, total); err != nil {
					return err
				}
				continue
			}
		}
		blob, err := object.GetBlob(r.repo.Storer, entry.Hash)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		total += blob.Size
		if err := r.limits.check(path.Join(dir, name), blob.Size, total); err != nil {
			return err
		}
		if err := copyBlob(p, blob, dst); err != nil {
			return err
		}
	}
}

func copyBlob(name string, b *object.Blob, dst FileWriter) error {
	rd, err := b.Reader()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return dst.WriteFile(name, data)
}

// shallowHint explains a missing commit in a shallow clone.
func (r *Repository) shallowHint() string {
	shallow, err := r.repo.Storer.Shallow()
	if err != nil || len(shallow) == 0 {
		return ""
	}
	return " (the repository is a shallow clone: fetch more history, for example `git fetch --deepen=1` or `fetch-depth: 0`)"
}

// Limits bound what reading a revision copies into memory, checked on the
// blobs' sizes before they are read; a zero field is no bound.
type Limits struct {
	MaxFileBytes  int64
	MaxTotalBytes int64
}

func (l Limits) check(name string, size, total int64) error {
	switch {
	case l.MaxFileBytes > 0 && size > l.MaxFileBytes:
		return fmt.Errorf("%s: file is %d bytes, over the limit of %d bytes (--max-file-bytes)", name, size, l.MaxFileBytes)
	case l.MaxTotalBytes > 0 && total > l.MaxTotalBytes:
		return fmt.Errorf("%s: the source is over %d bytes in total (--max-source-bytes); reading stopped at this file", name, l.MaxTotalBytes)
	}
	return nil
}

// SetLimits bounds the revisions Tree reads from now on.
func (r *Repository) SetLimits(l Limits) { r.limits = l }

package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/memory"
)

// WriteBlob stores data as a blob unless it is already stored.
func WriteBlob(s storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if s.HasEncodedObject(h) == nil {
		return h, nil
	}
	return StoreBlob(s, data)
}

// StoreBlob stores data as a blob without asking whether it is stored
// already: for a caller that knows it is not (a duplicate is harmless).
func StoreBlob(s storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// Encoder is a Git object that encodes itself: a tree or a commit.
type Encoder interface {
	Encode(plumbing.EncodedObject) error
}

// WriteObject stores o unless it is already stored.
func WriteObject(s storer.EncodedObjectStorer, o Encoder) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	if s.HasEncodedObject(obj.Hash()) == nil {
		return obj.Hash(), nil
	}
	return s.SetEncodedObject(obj)
}

// WriteFiles stores files (slash-separated paths) as a tree of trees and
// returns the root's hash.
func WriteFiles(s storer.EncodedObjectStorer, files map[string][]byte) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	dirs := map[string]map[string][]byte{}
	for p, data := range files {
		if dir, rest, nested := strings.Cut(p, "/"); nested {
			if dirs[dir] == nil {
				dirs[dir] = map[string][]byte{}
			}
			dirs[dir][rest] = data
			continue
		}
		h, err := WriteBlob(s, data)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("failed to store %s: %w", p, err)
		}
		entries = append(entries, object.TreeEntry{Name: p, Mode: filemode.Regular, Hash: h})
	}
	for dir, sub := range dirs {
		h, err := WriteFiles(s, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h})
	}
	return WriteTree(s, entries)
}

// WriteTree stores a tree of entries in Git's order.
func WriteTree(s storer.EncodedObjectStorer, entries []object.TreeEntry) (plumbing.Hash, error) {
	SortEntries(entries)
	return WriteObject(s, &object.Tree{Entries: entries})
}

// SortEntries orders tree entries as Git does: by name, a folder's name
// compared as if it ended in "/".
func SortEntries(entries []object.TreeEntry) {
	name := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return name(entries[i]) < name(entries[j]) })
}

// ReadFiles returns every file under t, by path relative to t.
func ReadFiles(t *object.Tree) (map[string][]byte, error) {
	files := map[string][]byte{}
	iter := t.Files()
	defer iter.Close()
	for {
		f, err := iter.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		r, err := f.Reader()
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", f.Name, err)
		}
		data, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", f.Name, err)
		}
		files[f.Name] = data
	}
}

// CommitTree returns the tree of the commit h.
func CommitTree(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(s, h)
	if err != nil {
		return nil, fmt.Errorf("failed to read commit %s: %w", h, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("failed to read the tree of %s: %w", h, err)
	}
	return t, nil
}

// Compact returns memory storage holding only commit tip, its tree, and
// ref pointing at tip; tip is marked shallow when it has parents. It keeps
// a long-running store's memory bounded by one tree, however many commits
// it wrote or fetched; Git needs no more to fetch and push on top of tip.
// Storage other than memory (a CacheDir) is returned as it is.
func Compact(s storage.Storer, ref plumbing.ReferenceName, tip plumbing.Hash) (storage.Storer, error) {
	if _, inMemory := s.(*memory.Storage); !inMemory {
		return s, nil
	}
	out := memory.NewStorage()
	if tip.IsZero() {
		return out, nil
	}
	if err := copyCommit(s, out, tip); err != nil {
		return nil, fmt.Errorf("failed to keep commit %s: %w", tip, err)
	}
	c, err := object.GetCommit(out, tip)
	if err != nil {
		return nil, err
	}
	if len(c.ParentHashes) > 0 {
		if err := out.SetShallow([]plumbing.Hash{tip}); err != nil {
			return nil, err
		}
	}
	if err := out.SetReference(plumbing.NewHashReference(ref, tip)); err != nil {
		return nil, err
	}
	return out, nil
}

// copyCommit copies commit h and everything its tree reaches (not its
// parents) from src to dst.
func copyCommit(src, dst storer.EncodedObjectStorer, h plumbing.Hash) error {
	c, err := object.GetCommit(src, h)
	if err != nil {
		return err
	}
	if err := copyObject(src, dst, h); err != nil {
		return err
	}
	return copyTree(src, dst, c.TreeHash)
}

func copyTree(src, dst storer.EncodedObjectStorer, h plumbing.Hash) error {
	t, err := object.GetTree(src, h)
	if err != nil {
		return err
	}
	if err := copyObject(src, dst, h); err != nil {
		return err
	}
	for _, e := range t.Entries {
		switch {
		case e.Mode == filemode.Dir:
			err = copyTree(src, dst, e.Hash)
		case e.Mode.IsFile():
			err = copyObject(src, dst, e.Hash)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyObject(src, dst storer.EncodedObjectStorer, h plumbing.Hash) error {
	o, err := src.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return err
	}
	_, err = dst.SetEncodedObject(o)
	return err
}

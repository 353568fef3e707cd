package gitstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/propagit/propagit/internal/gitrepo"
)

// treeIndex is a stored tree as this process last recorded or read it: its
// hash and its entries by name, folders as indexes of their own. Put builds
// the next tree against it, so a file whose blob hash is unchanged is
// neither written nor checked on disk, and a folder whose entries are all
// unchanged keeps its tree hash without being encoded again. An index
// always describes the tree of one commit (Store.indexTip), so it is
// only used while the branch tip is that commit.
type treeIndex struct {
	hash  plumbing.Hash
	files map[string]indexFile
	dirs  map[string]*treeIndex
	// revision is the source revision of a cluster folder's works.WorkFile;
	// revOK says whether it is known yet (read lazily from the blob).
	revision string
	revOK    bool
}

// indexFile is a file entry: its mode and blob, and, until its tree is
// written, the content of a blob that may need writing.
type indexFile struct {
	mode filemode.FileMode
	hash plumbing.Hash
	data []byte
}

// blobHash is the Git hash of data as a blob.
func blobHash(data []byte) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.BlobObject, data)
}

// readIndex reads the tree h, and every tree under it, from s. Blobs are
// not read: their hashes are in the trees.
func readIndex(s storer.EncodedObjectStorer, h plumbing.Hash) (*treeIndex, error) {
	t, err := object.GetTree(s, h)
	if err != nil {
		return nil, fmt.Errorf("failed to read tree %s: %w", h, err)
	}
	ix := &treeIndex{hash: h, files: map[string]indexFile{}, dirs: map[string]*treeIndex{}}
	for _, e := range t.Entries {
		if e.Mode != filemode.Dir {
			ix.files[e.Name] = indexFile{mode: e.Mode, hash: e.Hash}
			continue
		}
		if ix.dirs[e.Name], err = readIndex(s, e.Hash); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// treeWriter writes the objects of a new tree that its index does not
// already hold, and counts them. A blob several clusters receive is
// written once.
type treeWriter struct {
	s            storer.EncodedObjectStorer
	blobs, trees int
	written      map[plumbing.Hash]bool
}

// build returns the index of the folder holding files (slash-separated
// paths relative to it; each with its blob hash), writing what old (nil
// for none) does not hold.
func (w *treeWriter) build(files map[string]indexFile, old *treeIndex) (*treeIndex, error) {
	ix, err := w.children(files, old)
	if err != nil {
		return nil, err
	}
	return ix, w.seal(ix, old)
}

// children returns the index of a folder whose subfolders are built and
// written, but whose own files and tree are not yet (see seal).
func (w *treeWriter) children(files map[string]indexFile, old *treeIndex) (*treeIndex, error) {
	ix := &treeIndex{files: map[string]indexFile{}, dirs: map[string]*treeIndex{}}
	sub := map[string]map[string]indexFile{}
	for p, f := range files {
		dir, rest, nested := strings.Cut(p, "/")
		if !nested {
			ix.files[p] = f
			continue
		}
		if sub[dir] == nil {
			sub[dir] = map[string]indexFile{}
		}
		sub[dir][rest] = f
	}
	for dir, fs := range sub {
		var prev *treeIndex
		if old != nil {
			prev = old.dirs[dir]
		}
		d, err := w.build(fs, prev)
		if err != nil {
			return nil, err
		}
		ix.dirs[dir] = d
	}
	return ix, nil
}

// seal gives ix its hash: old's when every entry is the same, otherwise
// the hash of its tree, written with the blobs old does not hold.
func (w *treeWriter) seal(ix, old *treeIndex) error {
	if old != nil && sameEntries(ix, old) {
		ix.hash = old.hash
		forgetData(ix)
		return nil
	}
	for name, f := range ix.files {
		if o, ok := oldFile(old, name); (ok && o.hash == f.hash && o.mode == f.mode) || w.written[f.hash] {
			continue
		}
		// Neither old nor this writer holds the blob: store it without asking.
		if _, err := gitrepo.StoreBlob(w.s, f.data); err != nil {
			return fmt.Errorf("failed to store %s: %w", name, err)
		}
		if w.written == nil {
			w.written = map[plumbing.Hash]bool{}
		}
		w.written[f.hash] = true
		w.blobs++
	}
	forgetData(ix)
	obj := w.s.NewEncodedObject()
	if err := ix.tree().Encode(obj); err != nil {
		return err
	}
	h, err := w.s.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("failed to store a tree: %w", err)
	}
	ix.hash = h
	w.trees++
	return nil
}

// hashWith returns the hash ix's tree would have with the file name
// replaced by f, writing nothing.
func (ix *treeIndex) hashWith(name string, f indexFile) (plumbing.Hash, error) {
	t := ix.tree()
	for i := range t.Entries {
		if t.Entries[i].Name == name {
			t.Entries[i].Hash, t.Entries[i].Mode = f.hash, f.mode
		}
	}
	obj := &plumbing.MemoryObject{}
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return obj.Hash(), nil
}

// tree returns the Git tree of ix's entries, in Git's order.
func (ix *treeIndex) tree() *object.Tree {
	entries := make([]object.TreeEntry, 0, len(ix.files)+len(ix.dirs))
	for name, f := range ix.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: f.mode, Hash: f.hash})
	}
	for name, d := range ix.dirs {
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: d.hash})
	}
	gitrepo.SortEntries(entries)
	return &object.Tree{Entries: entries}
}

// sameEntries reports whether a and b have the same entries: names,
// modes and hashes (b's folders sealed).
func sameEntries(a, b *treeIndex) bool {
	if len(a.files) != len(b.files) || len(a.dirs) != len(b.dirs) {
		return false
	}
	for name, f := range a.files {
		if o, ok := b.files[name]; !ok || o.hash != f.hash || o.mode != f.mode {
			return false
		}
	}
	for name, d := range a.dirs {
		if o, ok := b.dirs[name]; !ok || o.hash != d.hash {
			return false
		}
	}
	return true
}

func oldFile(old *treeIndex, name string) (indexFile, bool) {
	if old == nil {
		return indexFile{}, false
	}
	f, ok := old.files[name]
	return f, ok
}

// forgetData drops the contents ix's files held until written: the index
// keeps hashes only.
func forgetData(ix *treeIndex) {
	for name, f := range ix.files {
		if f.data != nil {
			f.data = nil
			ix.files[name] = f
		}
	}
}

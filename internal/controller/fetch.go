package controller

import (
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/source"
)

// GitFetcher adapts a source.Follower to a Fetcher, reading each revision's
// tree into memory once.
func GitFetcher(f *source.Follower) Fetcher { return &gitFetcher{f: f} }

type gitFetcher struct {
	f    *source.Follower
	last Snapshot
	// files is last's tree in memory, with the blob each path holds: the
	// next revision rewrites only the files that changed and removes the
	// ones it lost, instead of reading every blob again. Nil after a
	// failed read (the next read starts afresh).
	files *blobFS
	// verify, when set, checks each tip before its tree is read
	// (VerifiedGitFetcher).
	verify func(rev string) error
}

func (g *gitFetcher) Fetch(ctx context.Context) (Snapshot, error) {
	rev, err := g.f.Fetch(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	if g.verify != nil {
		if err := g.verify(rev.Hash); err != nil {
			return Snapshot{}, err
		}
	}
	if rev.Hash == g.last.Revision && g.files != nil {
		return g.last, nil
	}
	files := g.files
	if files == nil {
		files = newBlobFS()
	}
	// The snapshot handed out before shares files' folder, which changes
	// now: it is not handed out again unless this read succeeds.
	g.files, g.last = nil, Snapshot{}
	files.begin()
	if err := g.f.Read(rev, files); err != nil {
		return Snapshot{}, err
	}
	if err := files.end(); err != nil {
		return Snapshot{}, err
	}
	g.files = files
	g.last = Snapshot{Revision: rev.Hash, Message: rev.Message, FS: files.fs, Root: "/"}
	return g.last, nil
}

// blobFS is an in-memory folder that knows which Git blob each file holds,
// so that reading the next revision into it skips the files that did not
// change (source.BlobWriter).
type blobFS struct {
	fs filesys.FileSystem
	// held is what each path holds; seen, what the read under way has
	// found so far.
	held, seen map[string]heldBlob
	pending    map[string]plumbing.Hash
	// written counts the files read into the folder.
	written int
}

// heldBlob is the blob a file holds, and its size.
type heldBlob struct {
	hash plumbing.Hash
	size int64
}

func newBlobFS() *blobFS {
	return &blobFS{fs: filesys.MakeFsInMemory(), held: map[string]heldBlob{}}
}

func (b *blobFS) begin() {
	b.seen, b.pending = map[string]heldBlob{}, map[string]plumbing.Hash{}
}

// Blob records that the revision has blob hash at path, and reports
// whether the folder holds it there already, and its size.
func (b *blobFS) Blob(path string, hash plumbing.Hash) (int64, bool) {
	if h, ok := b.held[path]; ok && h.hash == hash {
		b.seen[path] = h
		return h.size, true
	}
	b.pending[path] = hash
	return 0, false
}

func (b *blobFS) WriteFile(path string, data []byte) error {
	if err := b.fs.WriteFile(path, data); err != nil {
		return err
	}
	b.written++
	if h, ok := b.pending[path]; ok {
		b.seen[path] = heldBlob{hash: h, size: int64(len(data))}
		delete(b.pending, path)
	}
	return nil
}

// end removes the files the revision no longer has, and the folders they
// leave empty, and makes what the read saw what the folder holds.
func (b *blobFS) end() error {
	var gone []string
	for p := range b.held {
		if _, ok := b.seen[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		if err := b.fs.RemoveAll(p); err != nil {
			return err
		}
		if err := b.pruneEmpty(p); err != nil {
			return err
		}
	}
	b.held, b.seen, b.pending = b.seen, nil, nil
	return nil
}

// pruneEmpty removes the folders above file that hold nothing any more: a
// removed folder must not stay behind as an empty one.
func (b *blobFS) pruneEmpty(file string) error {
	for dir := file[:strings.LastIndexByte(file, '/')]; dir != ""; dir = dir[:strings.LastIndexByte(dir, '/')] {
		entries, err := b.fs.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return nil //nolint:nilerr // gone already, or still in use
		}
		if err := b.fs.RemoveAll(dir); err != nil {
			return err
		}
	}
	return nil
}

// ReadRevision reads a past revision's tree, one the clone holds (the last
// revision that completed its rollout), into a folder of its own.
func (g *gitFetcher) ReadRevision(_ context.Context, rev string) (Snapshot, error) {
	files := newBlobFS()
	files.begin()
	if err := g.f.Read(source.Revision{Hash: rev}, files); err != nil {
		return Snapshot{}, err
	}
	if err := files.end(); err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Revision: rev, FS: files.fs, Root: "/"}, nil
}

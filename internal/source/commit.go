package source

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// MaxCommitBytes bounds a commit object read from Git, checked before it is
// decoded: go-git decodes a long header (a hostile 10 MB signature) in time
// quadratic in its length, minutes for what a push can carry. Real commits
// are a few hundred bytes to a few KiB.
const MaxCommitBytes = 1 << 20

// readCommit reads commit h from s, refusing one larger than
// MaxCommitBytes before decoding it.
func readCommit(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Commit, error) {
	o, err := s.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	if o.Size() > MaxCommitBytes {
		return nil, fmt.Errorf("commit %s is %d bytes, more than %d: refused unread", h, o.Size(), MaxCommitBytes)
	}
	return object.DecodeCommit(s, o)
}

// WithObjects runs fn on the clone's objects, for reading commits (such
// as verifying their signatures) while no fetch or read changes them. It
// fails before the first Fetch.
func (f *Follower) WithObjects(fn func(storer.EncodedObjectStorer) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repo == nil {
		return fmt.Errorf("objects read before the first fetch of %s", f.safe)
	}
	return fn(f.repo.Storer)
}

// Objects returns the repository's objects, for reading commits.
func (r *Repository) Objects() storer.EncodedObjectStorer { return r.repo.Storer }

package verify_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// repo is a repository in memory whose commits a test makes one by one.
type repo struct {
	t    *testing.T
	r    *git.Repository
	wt   *git.Worktree
	n    int
	when time.Time
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &repo{t: t, r: r, wt: wt, when: time.Now().Add(-time.Hour)}
}

// commit writes a new file and commits it on HEAD, signed by key (nil:
// unsigned), with parents when given (a merge).
func (r *repo) commit(key *verifytest.Key, parents ...plumbing.Hash) plumbing.Hash {
	r.t.Helper()
	r.n++
	r.when = r.when.Add(time.Second)
	f, err := r.wt.Filesystem.Create(fmt.Sprintf("f%d", r.n))
	if err != nil {
		r.t.Fatal(err)
	}
	fmt.Fprintf(f, "%d\n", r.n)
	f.Close()
	if _, err := r.wt.Add(fmt.Sprintf("f%d", r.n)); err != nil {
		r.t.Fatal(err)
	}
	opts := &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: r.when}, Parents: parents}
	if key != nil {
		opts.Signer = key.Signer
	}
	h, err := r.wt.Commit(fmt.Sprintf("commit %d", r.n), opts)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// reset moves HEAD's branch to h.
func (r *repo) reset(h plumbing.Hash) {
	r.t.Helper()
	if err := r.wt.Reset(&git.ResetOptions{Commit: h, Mode: git.HardReset}); err != nil {
		r.t.Fatal(err)
	}
}

// raw stores a commit with the given signature header and returns it as
// read back (so its signed payload is the stored bytes).
func (r *repo) raw(sig string) *object.Commit {
	r.t.Helper()
	return r.object(r.store(sig))
}

// store stores a commit on HEAD with the given signature header, and
// returns its hash without decoding it.
func (r *repo) store(sig string) plumbing.Hash {
	r.t.Helper()
	head, err := r.r.Head()
	if err != nil {
		r.t.Fatal(err)
	}
	parent, err := r.r.CommitObject(head.Hash())
	if err != nil {
		r.t.Fatal(err)
	}
	c := &object.Commit{Author: parent.Author, Committer: parent.Committer, Message: "hostile\n",
		TreeHash: parent.TreeHash, ParentHashes: []plumbing.Hash{parent.Hash}, PGPSignature: sig}
	o := r.r.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		r.t.Fatal(err)
	}
	h, err := r.r.Storer.SetEncodedObject(o)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func (r *repo) object(h plumbing.Hash) *object.Commit {
	r.t.Helper()
	c, err := r.r.CommitObject(h)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// verifier trusts keys.
func verifier(t *testing.T, keys ...*verifytest.Key) *verify.Verifier {
	t.Helper()
	var text []byte
	for _, k := range keys {
		text = append(text, k.Public...)
	}
	ks, err := verify.ParseKeys(text, verify.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return verify.New(ks, verify.DefaultLimits())
}

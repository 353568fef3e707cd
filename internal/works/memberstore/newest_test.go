package memberstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// forge writes, with git alone (a member's credentials reach its whole
// repository), a parentless commit claiming revision at a future time to
// ref of the bare repository dir.
func forge(t *testing.T, dir string, ref plumbing.ReferenceName, revision string) {
	t.Helper()
	forgeCommit(t, dir, ref, "propagit: render x\n\n"+gitstore.SourceRevisionTrailer+revision+"\n")
}

// forgeCommit sets ref in the bare repository dir to a commit with an
// empty tree and message, committed a day in the future.
func forgeCommit(t *testing.T, dir string, ref plumbing.ReferenceName, message string) {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := repo.Storer
	tree, err := gitrepo.WriteTree(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "propagit", Email: "propagit@localhost", When: time.Now().Add(24 * time.Hour)}
	c, err := gitrepo.WriteObject(s, &object.Commit{Author: sig, Committer: sig, TreeHash: tree, Message: message})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetReference(plumbing.NewHashReference(ref, c)); err != nil {
		t.Fatal(err)
	}
}

// TestMemberCannotSetTheNewestRevision: with one works repository per
// member, member c2 rewrites its own repository — its work branch and its
// newest record — to claim a revision the controller never recorded,
// committed a day in the future. A reader that starts afresh (propagit
// status, the dashboard) still reads the revision the controller Put last.
func TestMemberCannotSetTheNewestRevision(t *testing.T) {
	root := t.TempDir()
	clusters := []string{"c0", "c1", "c2"}
	for _, c := range clusters {
		if _, err := git.PlainInit(filepath.Join(root, "works-"+c+".git"), true); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := "file://" + root + "/works-{cluster}.git"
	ctx := ctxT(t)
	hub, err := New(tmpl, gitstore.Options{}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Put(ctx, "rev1", fleet(3, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	// rev2 changes c0's Work only: c1 and c2 keep rev1 on their branches.
	if _, err := hub.Put(ctx, "rev2", append(fleet(1, 1, "rev2", "b"), fleet(3, 1, "rev1", "a")[1:]...)); err != nil {
		t.Fatal(err)
	}
	reader := func() string {
		t.Helper()
		r, err := New(tmpl, gitstore.Options{}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		r.Track(clusters)
		rev, err := r.NewestRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	if got := reader(); got != "rev2" {
		t.Fatalf("before any forgery: newest %q, want rev2", got)
	}
	c2 := filepath.Join(root, "works-c2.git")
	forge(t, c2, "refs/heads/propagit/works", "evil")
	forge(t, c2, gitstore.NewestRef, "evil")
	if got := reader(); got != "rev2" {
		t.Errorf("after c2 rewrote its repository: newest %q, want rev2", got)
	}
}

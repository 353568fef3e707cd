package workstest

import (
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/gitserver"
)

// remote is a bare repository reachable by a Store, and its folder.
type Remote struct {
	Name string
	URL  string
	Auth *githttp.BasicAuth
	Dir  string
	Srv  *gitserver.Server
}

// FileRemote is an empty bare repository served in-process over file://.
func FileRemote(t testing.TB) *Remote {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "works.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	return &Remote{Name: "file", URL: "file://" + dir, Dir: dir}
}

// HTTPRemote is an empty bare repository behind git http-backend with basic
// auth.
func HTTPRemote(t testing.TB) *Remote {
	t.Helper()
	srv, err := gitserver.New(t.TempDir(), gitserver.Options{Username: "agent", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	url, err := srv.InitBare("works.git")
	if err != nil {
		t.Fatal(err)
	}
	return &Remote{Name: "http", URL: url, Auth: &githttp.BasicAuth{Username: "agent", Password: "s3cret"},
		Dir: filepath.Join(srv.Root, "works.git"), Srv: srv}
}

// EachRemote runs f against a file:// and a smart-HTTP remote.
func EachRemote(t *testing.T, f func(t *testing.T, r *Remote)) {
	for _, mk := range []func(testing.TB) *Remote{FileRemote, HTTPRemote} {
		r := mk(t)
		t.Run(r.Name, func(t *testing.T) { f(t, r) })
	}
}

// Repo opens the bare repository directly.
func (r *Remote) Repo(t testing.TB) *git.Repository {
	t.Helper()
	repo, err := git.PlainOpen(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// History returns the commits reachable from ref, newest first; none when
// the ref does not exist.
func (r *Remote) History(t testing.TB, ref plumbing.ReferenceName) []*object.Commit {
	t.Helper()
	repo := r.Repo(t)
	h, err := repo.Reference(ref, true)
	if err == plumbing.ErrReferenceNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []*object.Commit
	c, err := repo.CommitObject(h.Hash())
	for err == nil {
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		c, err = c.Parent(0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TipFiles returns the files of ref's tip commit by path.
func (r *Remote) TipFiles(t testing.TB, ref plumbing.ReferenceName) map[string]string {
	t.Helper()
	hist := r.History(t, ref)
	if len(hist) == 0 {
		return nil
	}
	tree, err := hist[0].Tree()
	if err != nil {
		t.Fatal(err)
	}
	files, err := gitrepo.ReadFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, b := range files {
		out[p] = string(b)
	}
	return out
}

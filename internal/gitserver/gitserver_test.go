package gitserver_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitserver"
)

// commitFile makes a repository in memory with one commit holding one file.
func commitFile(t *testing.T, url string) (*git.Repository, plumbing.Hash) {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		t.Fatal(err)
	}
	s := repo.Storer
	blob := s.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, _ := blob.Writer()
	_, _ = w.Write([]byte("hello\n"))
	_ = w.Close()
	bh, _ := s.SetEncodedObject(blob)
	tree := &object.Tree{Entries: []object.TreeEntry{{Name: "a.txt", Mode: 0o100644, Hash: bh}}}
	to := s.NewEncodedObject()
	if err := tree.Encode(to); err != nil {
		t.Fatal(err)
	}
	th, _ := s.SetEncodedObject(to)
	sig := object.Signature{Name: "t", Email: "t@x", When: time.Unix(0, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: "one\n", TreeHash: th}
	co := s.NewEncodedObject()
	if err := c.Encode(co); err != nil {
		t.Fatal(err)
	}
	ch, _ := s.SetEncodedObject(co)
	if err := s.SetReference(plumbing.NewHashReference("refs/heads/main", ch)); err != nil {
		t.Fatal(err)
	}
	return repo, ch
}

func TestPushAndCloneOverHTTP(t *testing.T) {
	srv, err := gitserver.New(t.TempDir(), gitserver.Options{Username: "u", Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url, err := srv.InitBare("repo.git")
	if err != nil {
		t.Fatal(err)
	}
	repo, head := commitFile(t, url)
	ctx := context.Background()
	push := &git.PushOptions{RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}

	err = repo.PushContext(ctx, push)
	if err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Fatalf("push without credentials: error = %v, want authentication required", err)
	}
	push.Auth = &githttp.BasicAuth{Username: "u", Password: "secret"}
	if err := repo.PushContext(ctx, push); err != nil {
		t.Fatalf("push: %v", err)
	}
	if srv.Pushes() != 1 {
		t.Errorf("pushes = %d, want 1", srv.Pushes())
	}

	// The real git binary sees the pushed commit in the bare repository.
	out, err := exec.Command("git", "--git-dir", filepath.Join(srv.Root, "repo.git"), "rev-parse", "refs/heads/main").Output()
	if err != nil || strings.TrimSpace(string(out)) != head.String() {
		t.Fatalf("git rev-parse = %q, %v; want %s", out, err, head)
	}

	clone, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: url, Auth: push.Auth, ReferenceName: "refs/heads/main"})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	ref, err := clone.Head()
	if err != nil || ref.Hash() != head {
		t.Fatalf("clone head = %v, %v; want %s", ref, err, head)
	}
	if srv.Fetches() < 1 {
		t.Errorf("fetches = %d, want at least 1", srv.Fetches())
	}
	if err := clone.FetchContext(ctx, &git.FetchOptions{Auth: push.Auth}); !errors.Is(err, git.NoErrAlreadyUpToDate) {
		t.Errorf("second fetch: %v, want already up to date", err)
	}
}

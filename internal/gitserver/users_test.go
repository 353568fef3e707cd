package gitserver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitserver"
)

// TestUsersReachOnlyTheirRepositories: a per-repository account pushes to
// and clones its own repository, gets 403 on another one, 401 with a
// wrong password; the admin account reaches both.
func TestUsersReachOnlyTheirRepositories(t *testing.T) {
	srv, err := gitserver.New(t.TempDir(), gitserver.Options{Username: "admin", Password: "root",
		Users: []gitserver.User{{Username: "a", Password: "pa", Repos: []string{"works-a.git"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	urlA, _ := srv.InitBare("works-a.git")
	urlB, _ := srv.InitBare("works-b.git")
	ctx := context.Background()
	a := &githttp.BasicAuth{Username: "a", Password: "pa"}
	push := func(url string, auth transport.AuthMethod) error {
		repo, _ := commitFile(t, url)
		return repo.PushContext(ctx, &git.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})
	}
	clone := func(url string, auth transport.AuthMethod) error {
		_, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: url, Auth: auth, ReferenceName: "refs/heads/main"})
		return err
	}
	if err := push(urlA, a); err != nil {
		t.Fatalf("a pushes to its own repository: %v", err)
	}
	if err := clone(urlA, a); err != nil {
		t.Fatalf("a clones its own repository: %v", err)
	}
	if err := push(urlB, &githttp.BasicAuth{Username: "admin", Password: "root"}); err != nil {
		t.Fatalf("admin pushes to works-b: %v", err)
	}
	if err := clone(urlB, a); !errors.Is(err, transport.ErrAuthorizationFailed) {
		t.Errorf("a clones works-b: error = %v, want %v (403)", err, transport.ErrAuthorizationFailed)
	}
	if err := push(urlB, a); !errors.Is(err, transport.ErrAuthorizationFailed) {
		t.Errorf("a pushes to works-b: error = %v, want %v (403)", err, transport.ErrAuthorizationFailed)
	}
	if err := clone(urlA, &githttp.BasicAuth{Username: "a", Password: "wrong"}); !errors.Is(err, transport.ErrAuthenticationRequired) {
		t.Errorf("a with a wrong password: error = %v, want %v (401)", err, transport.ErrAuthenticationRequired)
	}
	if err := clone(srv.URL+"/works-a.git/../works-b.git", a); err == nil {
		t.Error("a reached works-b through ..")
	}
}

package e2etest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Checkout is a working copy on one branch whose commits a test pushes to
// its origin, as a person would.
type Checkout struct {
	t      testing.TB
	Dir    string
	Repo   *git.Repository
	branch string
	auth   transport.AuthMethod
}

// NewCheckout creates an empty working copy on branch whose origin is url;
// auth (nil for none) authenticates the pushes.
func NewCheckout(t testing.TB, url, branch string, auth transport.AuthMethod) *Checkout {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)},
	})
	if err != nil {
		t.Fatalf("failed to create the working copy: %v", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		t.Fatal(err)
	}
	return &Checkout{t: t, Dir: dir, Repo: repo, branch: branch, auth: auth}
}

// Write writes a file, path slash-separated and relative to the repository
// root.
func (c *Checkout) Write(path, content string) {
	c.t.Helper()
	p := filepath.Join(c.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// Commit records every change in the working copy with a fixed author and
// returns the commit hash.
func (c *Checkout) Commit(msg string) string {
	c.t.Helper()
	wt, err := c.Repo.Worktree()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		c.t.Fatalf("failed to stage changes: %v", err)
	}
	sig := &object.Signature{Name: "propagit e2e", Email: "e2e@propagit.invalid", When: time.Now()}
	h, err := wt.Commit(msg, &git.CommitOptions{All: true, Author: sig})
	if err != nil {
		c.t.Fatalf("failed to commit %q: %v", msg, err)
	}
	return h.String()
}

// Push pushes the branch to origin or, when url is set, to that URL.
func (c *Checkout) Push(url string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := config.RefSpec(fmt.Sprintf("refs/heads/%s:refs/heads/%s", c.branch, c.branch))
	opts := &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Auth: c.auth}
	var err error
	if url != "" {
		r := git.NewRemote(c.Repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{url}})
		err = r.PushContext(ctx, opts)
	} else {
		err = c.Repo.PushContext(ctx, opts)
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		c.t.Fatalf("failed to push: %v", err)
	}
}

// CommitPush commits every change, pushes it to origin and returns the
// commit.
func (c *Checkout) CommitPush(msg string) string {
	c.t.Helper()
	h := c.Commit(msg)
	c.Push("")
	return h
}

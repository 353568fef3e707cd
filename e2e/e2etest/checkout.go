package e2etest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// WorkingCopy is a working copy on one branch whose commits go to its
// origin, as a person's would. Its methods return errors, for a goroutine
// that is not the test's (a soak's committer); Checkout, which fails the
// test instead, is the form for a test.
type WorkingCopy struct {
	Dir  string
	Repo *git.Repository
	// AuthorName and AuthorEmail sign the commits.
	AuthorName, AuthorEmail string
	// Signer, when set, signs the commits cryptographically (go-git's
	// CommitOptions.Signer: OpenPGP or SSH, as git commit -S would).
	Signer git.Signer
	// Parents, when set, are the next commit's parents (a merge); the
	// commit clears them.
	Parents []plumbing.Hash

	branch string
	auth   transport.AuthMethod
}

// NewWorkingCopy creates an empty working copy in dir on branch whose
// origin is url; auth (nil for none) authenticates the pushes. Its commits
// are signed "propagit e2e".
func NewWorkingCopy(dir, url, branch string, auth transport.AuthMethod) (*WorkingCopy, error) {
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the working copy: %w", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		return nil, err
	}
	return &WorkingCopy{Dir: dir, Repo: repo, AuthorName: "propagit e2e", AuthorEmail: "e2e@propagit.invalid",
		branch: branch, auth: auth}, nil
}

// WriteFile writes a file, path slash-separated and relative to the
// repository root.
func (w *WorkingCopy) WriteFile(path, content string) error {
	p := filepath.Join(w.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// CommitAll records every change in the working copy and returns the
// commit hash.
func (w *WorkingCopy) CommitAll(msg string) (string, error) {
	wt, err := w.Repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", fmt.Errorf("failed to stage changes: %w", err)
	}
	sig := &object.Signature{Name: w.AuthorName, Email: w.AuthorEmail, When: time.Now()}
	h, err := wt.Commit(msg, &git.CommitOptions{All: true, Author: sig, Signer: w.Signer, Parents: w.Parents})
	w.Parents = nil
	if err != nil {
		return "", fmt.Errorf("failed to commit %q: %w", msg, err)
	}
	return h.String(), nil
}

// PushBranch pushes the branch to origin or, when url is set, to that URL.
func (w *WorkingCopy) PushBranch(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := config.RefSpec(fmt.Sprintf("refs/heads/%s:refs/heads/%s", w.branch, w.branch))
	opts := &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Auth: w.auth}
	var err error
	if url != "" {
		r := git.NewRemote(w.Repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{url}})
		err = r.PushContext(ctx, opts)
	} else {
		err = w.Repo.PushContext(ctx, opts)
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("failed to push: %w", err)
	}
	return nil
}

// Checkout is a WorkingCopy whose methods fail the test.
type Checkout struct {
	*WorkingCopy
	t testing.TB
}

// NewCheckout creates an empty working copy on branch whose origin is
// url; auth (nil for none) authenticates the pushes.
func NewCheckout(t testing.TB, url, branch string, auth transport.AuthMethod) *Checkout {
	t.Helper()
	w, err := NewWorkingCopy(t.TempDir(), url, branch, auth)
	if err != nil {
		t.Fatal(err)
	}
	return &Checkout{WorkingCopy: w, t: t}
}

// Write writes a file, path slash-separated and relative to the repository
// root.
func (c *Checkout) Write(path, content string) {
	c.t.Helper()
	if err := c.WriteFile(path, content); err != nil {
		c.t.Fatal(err)
	}
}

// Read returns a file's content, path relative to the repository root.
func (c *Checkout) Read(path string) string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, filepath.FromSlash(path)))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(data)
}

// Edit replaces exactly one occurrence of old in a file.
func (c *Checkout) Edit(path, old, new string) {
	c.t.Helper()
	content := c.Read(path)
	if n := strings.Count(content, old); n != 1 {
		c.t.Fatalf("%s: want exactly one %q, found %d", path, old, n)
	}
	c.Write(path, strings.Replace(content, old, new, 1))
}

// Remove deletes a file or folder, path relative to the repository root.
func (c *Checkout) Remove(path string) {
	c.t.Helper()
	if err := os.RemoveAll(filepath.Join(c.Dir, filepath.FromSlash(path))); err != nil {
		c.t.Fatal(err)
	}
}

// CopyDir copies the files under src (on disk) to dst in the checkout.
func (c *Checkout) CopyDir(src, dst string) {
	c.t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return c.WriteFile(filepath.ToSlash(filepath.Join(dst, rel)), string(data))
	})
	if err != nil {
		c.t.Fatalf("failed to copy %s: %v", src, err)
	}
}

// Commit records every change in the working copy and returns the commit
// hash.
func (c *Checkout) Commit(msg string) string {
	c.t.Helper()
	h, err := c.CommitAll(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

// Push pushes the branch to origin or, when url is set, to that URL.
func (c *Checkout) Push(url string) {
	c.t.Helper()
	if err := c.PushBranch(url); err != nil {
		c.t.Fatal(err)
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

package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitrepo"
)

// FollowOptions say which branch of which repository to follow.
type FollowOptions struct {
	URL    string
	Branch string
	// Path is the folder inside the repository to read ("" for the root).
	Path string
	Auth transport.AuthMethod
	// CacheDir holds a bare clone between restarts; "" keeps it in memory.
	CacheDir string
	// Limits bound each revision Read.
	Limits Limits
}

// Follower keeps a clone of one branch and fetches it incrementally: an
// up-to-date fetch costs one round trip and no tree rebuild.
type Follower struct {
	opts FollowOptions
	safe string

	mu   sync.Mutex
	repo *git.Repository
}

// NewFollower returns a follower; nothing is fetched until Fetch.
func NewFollower(opts FollowOptions) *Follower {
	gitrepo.Install()
	return &Follower{opts: opts, safe: gitrepo.RedactURL(opts.URL)}
}

// Fetch brings the branch up to date and returns its tip; an up-to-date
// fetch is one round trip. On error the caller keeps what it had.
func (f *Follower) Fetch(ctx context.Context) (Revision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.open(ctx); err != nil {
		return Revision{}, err
	}
	ref := plumbing.NewBranchReferenceName(f.opts.Branch)
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", ref, ref))
	// RemoteURL: the URL of this run, so a rotated token in it is used.
	err := f.repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RemoteURL: gitrepo.TransportURL(f.opts.URL), RefSpecs: []config.RefSpec{spec}, Auth: f.opts.Auth, Force: true})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return Revision{}, fmt.Errorf("failed to fetch %s from %s: %w", f.opts.Branch, f.safe, gitrepo.Sanitize(err, f.opts.URL))
	}
	tip, err := f.repo.Reference(ref, true)
	if err != nil {
		return Revision{}, fmt.Errorf("branch %s not found in %s: %w", f.opts.Branch, f.safe, err)
	}
	rev := Revision{Name: f.opts.Branch, Hash: tip.Hash().String()}
	if c, err := readCommit(f.repo.Storer, tip.Hash()); err == nil {
		rev.Message = c.Message
	}
	return rev, nil
}

// Read copies the files under Path of rev (as returned by Fetch) into dst,
// rooted at "/".
func (f *Follower) Read(rev Revision, dst FileWriter) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repo == nil {
		return fmt.Errorf("read before the first fetch of %s", f.safe)
	}
	r := &Repository{repo: f.repo, location: f.safe, limits: f.opts.Limits}
	_, err := r.commitTree(rev.Hash, mustClean(f.opts.Path), dst)
	return err
}

// open reuses the cached bare clone or makes a new one.
func (f *Follower) open(ctx context.Context) error {
	if f.repo != nil {
		return nil
	}
	if _, err := cleanSubdir(f.opts.Path); err != nil {
		return err
	}
	if f.opts.CacheDir != "" {
		if repo, err := git.PlainOpen(f.opts.CacheDir); err == nil {
			if sameOrigin(repo, f.opts.URL) {
				f.repo = repo
				return nil
			}
			// A clone of another repository (or of nothing known) is never
			// reused: its commits are not this repository's.
			if err := os.RemoveAll(f.opts.CacheDir); err != nil {
				return fmt.Errorf("failed to remove the clone of another repository in %s: %w", f.opts.CacheDir, err)
			}
		}
		if err := os.MkdirAll(f.opts.CacheDir, 0o755); err != nil {
			return err
		}
	}
	opts := &git.CloneOptions{URL: gitrepo.TransportURL(f.opts.URL), Auth: f.opts.Auth, SingleBranch: true,
		ReferenceName: plumbing.NewBranchReferenceName(f.opts.Branch), NoCheckout: true, Tags: git.NoTags}
	var repo *git.Repository
	var err error
	if f.opts.CacheDir == "" {
		repo, err = git.CloneContext(ctx, memory.NewStorage(), nil, opts)
	} else {
		repo, err = git.PlainCloneContext(ctx, f.opts.CacheDir, true, opts)
	}
	if err != nil {
		if f.opts.CacheDir != "" {
			_ = os.RemoveAll(f.opts.CacheDir)
		}
		return fmt.Errorf("failed to clone %s: %w", f.safe, gitrepo.Sanitize(err, f.opts.URL))
	}
	f.repo = repo
	return nil
}

func mustClean(p string) string {
	s, _ := cleanSubdir(p)
	return s
}

// sameOrigin reports whether repo's origin is url, credentials and query
// left aside.
func sameOrigin(repo *git.Repository, url string) bool {
	remote, err := repo.Remote("origin")
	if err != nil || len(remote.Config().URLs) == 0 {
		return false
	}
	return gitrepo.RedactURL(remote.Config().URLs[0]) == gitrepo.RedactURL(gitrepo.TransportURL(url))
}

// CacheKey names the cache folder of the repository at url: a hash of the
// URL without credentials or query, so that changing the repository never
// reuses another's clone and rotating a token keeps the clone.
func CacheKey(url string) string {
	sum := sha256.Sum256([]byte(gitrepo.RedactURL(url)))
	return "repo-" + hex.EncodeToString(sum[:12])
}

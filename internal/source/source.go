package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/api/workv1alpha1"

	"github.com/propagit/propagit/internal/gitrepo"
)

// WorkingTree is the revision name that stands for the files on disk,
// uncommitted changes included.
const WorkingTree = "."

// ErrFolderNotFound is returned by Tree when the revision has no such
// folder: a pull request may add or remove a whole fleet folder.
var ErrFolderNotFound = errors.New("folder not found")

// FileWriter knows how to store one file; parent folders are created as
// needed. kyaml's filesys.FileSystem satisfies it.
type FileWriter interface {
	WriteFile(path string, data []byte) error
}

// BlobWriter is a FileWriter that may hold files of an earlier revision:
// before a file is read, Blob is told its path and Git blob hash, and when
// it answers that it holds that blob at that path already (and its size),
// the blob is not opened at all (a revision changing one file of thousands
// reads one). Limits still count every file.
type BlobWriter interface {
	FileWriter
	Blob(path string, hash plumbing.Hash) (size int64, have bool)
}

// Revision is what a revision name resolved to.
type Revision struct {
	// Name is the revision as asked: "main", "HEAD~1", "." ...
	Name string
	// Hash is the full commit hash. For the working tree it is the commit
	// HEAD points at ("" in a repository without commits).
	Hash string
	// WorkingTree is true when the files were read from disk.
	WorkingTree bool
	// Message is the commit message (set by Follower.Fetch): its trailers
	// carry the author's acknowledgements, such as a large prune.
	Message string
}

// Short returns the hash shortened for messages.
func (r Revision) Short() string {
	return workv1alpha1.ShortRevision(r.Hash)
}

// String renders the short hash, or "working tree".
func (r Revision) String() string {
	if r.WorkingTree {
		return "working tree"
	}
	return r.Short()
}

// Repository is an opened Git repository.
type Repository struct {
	repo *git.Repository
	// workdir is the root of the working tree on disk; "" when the
	// repository has none (bare, or cloned into memory).
	workdir string
	// location is where the repository came from, safe to print.
	location string
	// limits bound the revisions read.
	limits Limits
}

// Open opens the repository at location: a path inside a working copy, a
// bare repository, or a URL, which is cloned into memory as a mirror (every
// ref, so branch and tag names resolve as they do on the remote; no working
// tree). URLs carry no credentials other than their own userinfo.
func Open(ctx context.Context, location string) (*Repository, error) {
	if IsURL(location) {
		return clone(ctx, location)
	}
	abs, err := filepath.Abs(location)
	if err != nil {
		return nil, fmt.Errorf("failed to open repository %s: %w", location, err)
	}
	// A bare repository is found only without DetectDotGit; a folder
	// inside a working copy only with it.
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	}
	if err != nil {
		return nil, fmt.Errorf("failed to open repository %s: %w", location, err)
	}
	r := &Repository{repo: repo, location: location}
	if wt, err := repo.Worktree(); err == nil {
		r.workdir = wt.Filesystem.Root()
	} else if !errors.Is(err, git.ErrIsBareRepository) {
		return nil, fmt.Errorf("failed to open the working tree of %s: %w", location, err)
	}
	return r, nil
}

// clone mirrors the repository at rawURL into memory.
func clone(ctx context.Context, rawURL string) (*Repository, error) {
	gitrepo.Install()
	safe := gitrepo.RedactURL(rawURL)
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{
		URL:    gitrepo.TransportURL(rawURL),
		Mirror: true,
		Tags:   git.AllTags,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to clone %s: %w", safe, gitrepo.Sanitize(err, rawURL))
	}
	return &Repository{repo: repo, location: safe}, nil
}

// Tree copies the files under subdir (slash-separated, relative to the
// repository root; "" for all) of revision rev into dst, with paths relative
// to subdir and a leading "/". rev is anything `git rev-parse` accepts for a
// commit that go-git implements (branch, tag, short or long hash, HEAD~1,
// main^2), or WorkingTree for the files on disk.
func (r *Repository) Tree(rev, subdir string, dst FileWriter) (Revision, error) {
	dir, err := cleanSubdir(subdir)
	if err != nil {
		return Revision{}, err
	}
	if rev == WorkingTree {
		return r.workingTree(dir, dst)
	}
	return r.commitTree(rev, dir, dst)
}

// cleanSubdir validates a folder relative to the repository root.
func cleanSubdir(subdir string) (string, error) {
	s := path.Clean(filepath.ToSlash(subdir))
	if s == "." || s == "/" {
		return "", nil
	}
	if path.IsAbs(s) || s == ".." || strings.HasPrefix(s, "../") {
		return "", fmt.Errorf("invalid path %q: want a folder relative to the repository root", subdir)
	}
	return s, nil
}

// IsURL tells a URL ("scheme://…" or scp-like "user@host:path") from a path.
func IsURL(location string) bool {
	if strings.Contains(location, "://") {
		return true
	}
	if _, err := os.Stat(location); err == nil {
		return false
	}
	at := strings.Index(location, "@")
	colon := strings.Index(location, ":")
	slash := strings.Index(location, "/")
	return at > 0 && colon > at && (slash < 0 || slash > colon)
}

// Resolve returns the full commit hash rev names: a branch, a tag, HEAD,
// HEAD~1, a hash or a prefix of one, as git rev-parse would.
func (r *Repository) Resolve(rev string) (string, error) {
	hash, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return "", fmt.Errorf("%s: cannot resolve %q: %w", r.location, rev, err)
	}
	return hash.String(), nil
}

// IsAncestor reports whether commit older is newer or one of its
// ancestors; both are full hashes. An error means the history needed to
// tell is not in this repository (a shallow clone, a stale checkout).
func (r *Repository) IsAncestor(older, newer string) (bool, error) {
	if older == newer {
		return true, nil
	}
	a, err := r.repo.CommitObject(plumbing.NewHash(older))
	if err != nil {
		return false, fmt.Errorf("%s: commit %s: %w", r.location, older, err)
	}
	b, err := r.repo.CommitObject(plumbing.NewHash(newer))
	if err != nil {
		return false, fmt.Errorf("%s: commit %s: %w", r.location, newer, err)
	}
	return a.IsAncestor(b)
}

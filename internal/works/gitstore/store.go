package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// Options configure a Store.
type Options struct {
	// URL of the repository: file://, http(s)://, ssh:// or a local path.
	// It may carry credentials; they never appear in errors.
	URL string
	// StatusURL, when set, keeps the status refs in another repository
	// (same Auth). Every fetch downloads the list of all refs of its
	// repository, so with status refs beside the work branch an agent's
	// poll grows by ~70 bytes per cluster; a separate repository keeps it
	// constant. Default: URL.
	StatusURL string
	// Auth authenticates fetches and pushes; nil for none.
	Auth transport.AuthMethod
	// Branch holds the Works; default "propagit/works".
	Branch string
	// AuthorName and AuthorEmail sign the commits.
	AuthorName  string
	AuthorEmail string
	// CacheDir keeps the fetched objects on disk between runs ("" keeps
	// them in memory). One process per folder.
	CacheDir string
	// HeartbeatInterval, when positive, writes a heartbeat-only status
	// change to the cluster's HeartbeatRef once the last heartbeat written
	// is that old; status commits are still made on transitions only.
	// Zero never writes heartbeat-only changes.
	HeartbeatInterval time.Duration
	// PushAttempts bounds the fetch-rebuild-push rounds of one write when
	// the remote ref moved meanwhile; default 5.
	PushAttempts int
	// Signer, when set, signs every commit the store writes: the
	// controller's Works key, so that agents apply only what it wrote.
	Signer CommitSigner
	// WorkVerifier, when set, must accept the work branch's tip before
	// ListCluster reads a Work from it (an agent given the controller's
	// public key); a tip it refuses is a *works.RefusedError.
	WorkVerifier TipVerifier
}

// DefaultOptions returns the defaults for everything but URL and Auth.
func DefaultOptions() Options {
	return Options{Branch: "propagit/works", AuthorName: "propagit", AuthorEmail: "propagit@localhost", PushAttempts: 5}
}

// Store keeps Works and their status in a Git repository:
//
//	refs/heads/propagit/works             a commit per source revision that changed a Work
//	  <cluster>/work.yaml                 the Work without manifests
//	  <cluster>/<namespace or _cluster>/<kind>.<group>_<name>.yaml
//	                                      one manifest, as `propagit render` writes it
//	refs/propagit/status/<cluster>        a commit per status transition, parent = the
//	  status.yaml                         previous one: each cluster's own ref, so
//	                                      writers of different clusters never contend
//
// Put and List (the controller) share one local copy of the branch,
// ListCluster (an agent) has its own, and each cluster's status ref its
// own. Fetches are shallow when the server allows, and a copy in memory
// keeps only its tip commit and tree, so memory follows the current
// content, not the history; with CacheDir the branch copies live on disk
// (status copies are always in memory).
//
// Store is safe for concurrent use; status calls for different clusters
// never wait for each other.
type Store struct {
	opts     Options
	worksEP  *gitrepo.Endpoint
	statusEP *gitrepo.Endpoint
	now      func() time.Time
	// beforePush, when set (tests), runs between building a commit and
	// pushing it.
	beforePush func()

	mu       sync.Mutex // guards works, worksTip, memo and index: Put and List
	works    storage.Storer
	worksTip plumbing.Hash // the tip works was last compacted to
	memo     encodeMemo
	// index is the tree of commit indexTip, what Put builds on while the
	// branch tip is that commit.
	index    *treeIndex
	indexTip plumbing.Hash

	written writeCounters

	agentMu  sync.Mutex // guards agent and agentTip: ListCluster
	agent    storage.Storer
	agentTip plumbing.Hash

	statusMu sync.Mutex
	status   map[string]*statusRepo
}

var (
	_ works.Store       = (*Store)(nil)
	_ works.StatusStore = (*Store)(nil)
)

// New returns a store for the repository at opts.URL. Nothing is
// fetched until the first call.
func New(opts Options) (*Store, error) {
	def := DefaultOptions()
	if opts.URL == "" {
		return nil, errors.New("invalid git store options: no repository URL")
	}
	if opts.Branch == "" {
		opts.Branch = def.Branch
	}
	if opts.AuthorName == "" {
		opts.AuthorName = def.AuthorName
	}
	if opts.AuthorEmail == "" {
		opts.AuthorEmail = def.AuthorEmail
	}
	if opts.PushAttempts <= 0 {
		opts.PushAttempts = def.PushAttempts
	}
	if err := plumbing.NewBranchReferenceName(opts.Branch).Validate(); err != nil {
		return nil, fmt.Errorf("invalid branch %q: %w", opts.Branch, err)
	}
	gitrepo.Install()
	if opts.StatusURL == "" {
		opts.StatusURL = opts.URL
	}
	g := &Store{opts: opts, worksEP: gitrepo.NewEndpoint(opts.URL), statusEP: gitrepo.NewEndpoint(opts.StatusURL),
		now: time.Now, status: map[string]*statusRepo{}}
	var err error
	if g.works, err = openStorage(opts.CacheDir, "works.git"); err != nil {
		return nil, err
	}
	if g.agent, err = openStorage(opts.CacheDir, "agent.git"); err != nil {
		return nil, err
	}
	return g, nil
}

// openStorage opens (creating it if needed) a bare repository named name
// under dir, or returns memory storage when dir is "".
func openStorage(dir, name string) (storage.Storer, error) {
	if dir == "" {
		return memory.NewStorage(), nil
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create cache folder %s: %w", dir, err)
	}
	repo, err := git.PlainInit(p, true)
	if errors.Is(err, git.ErrRepositoryAlreadyExists) {
		repo, err = git.PlainOpen(p)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to open cache %s: %w", p, err)
	}
	return repo.Storer, nil
}

// branchRef is the work branch on the remote and locally.
func (g *Store) branchRef() plumbing.ReferenceName {
	return plumbing.NewBranchReferenceName(g.opts.Branch)
}

// trackingRef is where the remote work branch is fetched to.
func (g *Store) trackingRef() plumbing.ReferenceName {
	return plumbing.NewRemoteReferenceName("origin", g.opts.Branch)
}

package gitstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"

	"github.com/propagit/propagit/internal/gitrepo"
)

// fetch fetches the remote ref src into the local ref dst of s — shallow
// when depth > 0 and the server allows it — and returns the hash dst then
// holds: zero when the remote has no such ref.
func (g *Store) fetch(ctx context.Context, ep *gitrepo.Endpoint, s storage.Storer, src, dst plumbing.ReferenceName, depth int) (plumbing.Hash, error) {
	opts := &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec(fmt.Sprintf("+%s:%s", src, dst))},
		Auth:       g.opts.Auth,
		Tags:       git.NoTags,
	}
	if depth > 0 && !ep.NoShallow.Load() {
		opts.Depth = depth
	}
	var err error
	for attempt := 1; ; attempt++ {
		err = ep.Remote(s).FetchContext(ctx, opts)
		if opts.Depth > 0 && gitrepo.IsShallowUnsupported(err) {
			ep.NoShallow.Store(true)
			opts.Depth = 0
			err = ep.Remote(s).FetchContext(ctx, opts)
		}
		if !gitrepo.RefMoved(err) || attempt == fetchAttempts || ctx.Err() != nil {
			break
		}
	}
	switch {
	case err == nil || errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, git.NoMatchingRefSpecError{}) || errors.Is(err, transport.ErrEmptyRemoteRepository):
		if err := s.RemoveReference(dst); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("failed to forget %s: %w", dst, err)
		}
		return plumbing.ZeroHash, nil
	default:
		return plumbing.ZeroHash, fmt.Errorf("failed to fetch %s from %s: %w", src, ep.Safe, gitrepo.Sanitize(err, ep.URL))
	}
	ref, err := s.Reference(dst)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("failed to read %s: %w", dst, err)
	}
	return ref.Hash(), nil
}

// fetchAttempts bounds how often fetch asks again after refMoved.
const fetchAttempts = 3

// push points the local ref local of s at commit and pushes it to the
// remote ref dst, without force.
func (g *Store) push(ctx context.Context, ep *gitrepo.Endpoint, s storage.Storer, local, dst plumbing.ReferenceName, commit plumbing.Hash) error {
	return g.pushRef(ctx, ep, s, local, dst, commit, false)
}

// pushLease pushes commit to the work branch when the remote branch is at
// lease, and fails (isRejected) otherwise.
func (g *Store) pushLease(ctx context.Context, commit, lease plumbing.Hash) error {
	ref := g.branchRef()
	return g.pushRefLease(ctx, g.worksEP, g.works, ref, ref, commit, false, lease)
}

// pushRef is push; force replaces the remote ref even when commit does not
// descend from it.
func (g *Store) pushRef(ctx context.Context, ep *gitrepo.Endpoint, s storage.Storer, local, dst plumbing.ReferenceName, commit plumbing.Hash, force bool) error {
	return g.pushRefLease(ctx, ep, s, local, dst, commit, force, plumbing.ZeroHash)
}

// pushRefLease is pushRef; a lease that is not zero is the value the
// remote ref must have for the push to go ahead.
func (g *Store) pushRefLease(ctx context.Context, ep *gitrepo.Endpoint, s storage.Storer, local, dst plumbing.ReferenceName, commit plumbing.Hash, force bool, lease plumbing.Hash) error {
	if err := s.SetReference(plumbing.NewHashReference(local, commit)); err != nil {
		return fmt.Errorf("failed to set %s: %w", local, err)
	}
	if g.beforePush != nil {
		g.beforePush()
	}
	spec := fmt.Sprintf("%s:%s", local, dst)
	if force {
		spec = "+" + spec
	}
	opts := &git.PushOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec(spec)},
		Auth:       g.opts.Auth,
	}
	if !lease.IsZero() {
		opts.RequireRemoteRefs = []config.RefSpec{config.RefSpec(lease.String() + ":" + dst.String())}
	}
	err := ep.Remote(s).PushContext(ctx, opts)
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return fmt.Errorf("failed to push %s to %s: %w", dst, ep.Safe, gitrepo.Sanitize(err, ep.URL))
}

package gitstore

import (
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// RolloutsRef is the ref of the rollouts' state (works.RolloutStates): one
// commit, with no parent, holding rollouts.json, force-pushed over the
// previous one like a heartbeat. It lives in the status repository, which
// only the controller and the agents write, outside refs/propagit/status/
// and refs/propagit/heartbeat/, so no cluster name can collide with it.
//
// Agents can push to that repository, so with a signing key the commit is
// signed like the Works, and read back only when this key signed it: a
// record an agent forged (to open a wave early, or to name an old revision
// as the stable one) is refused with a *works.RefusedError.
const RolloutsRef = plumbing.ReferenceName("refs/propagit/rollouts")

const rolloutsFile = "rollouts.json"

var _ works.RolloutStates = (*Store)(nil)

// PutRollouts implements works.RolloutStates.
func (g *Store) PutRollouts(ctx context.Context, data []byte) error {
	s := memory.NewStorage()
	blob, err := gitrepo.WriteBlob(s, data)
	if err != nil {
		return err
	}
	tree, err := gitrepo.WriteTree(s, []object.TreeEntry{{Name: rolloutsFile, Mode: filemode.Regular, Hash: blob}})
	if err != nil {
		return err
	}
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: g.now()}
	commit, err := g.writeSigned(s, &object.Commit{Author: sig, Committer: sig, Message: "propagit: rollouts\n", TreeHash: tree})
	if err != nil {
		return fmt.Errorf("failed to store the rollouts: %w", err)
	}
	return g.pushRef(ctx, g.statusEP, s, RolloutsRef, RolloutsRef, commit, true)
}

// Rollouts implements works.RolloutStates.
func (g *Store) Rollouts(ctx context.Context) ([]byte, error) {
	s := memory.NewStorage()
	tip, err := g.fetch(ctx, g.statusEP, s, RolloutsRef, RolloutsRef, 1)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	if own, ok := g.opts.Signer.(OwnVerifier); ok {
		if err := own.VerifyOwn(s, tip); err != nil {
			return nil, &works.RefusedError{Commit: tip.String(), Where: g.statusEP.Safe, What: "the rollouts record " + string(RolloutsRef), Err: err}
		}
	}
	c, err := object.GetCommit(s, tip)
	if err != nil {
		return nil, fmt.Errorf("failed to read the rollouts %s: %w", RolloutsRef, err)
	}
	f, err := c.File(rolloutsFile)
	if err != nil {
		return nil, fmt.Errorf("failed to read the rollouts %s: %w", RolloutsRef, err)
	}
	if f.Size > works.MaxRolloutsSize {
		return nil, fmt.Errorf("the rollouts %s hold %d bytes, more than %d", RolloutsRef, f.Size, works.MaxRolloutsSize)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, works.MaxRolloutsSize))
}

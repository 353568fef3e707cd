package gitstore

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/propagit/propagit/internal/works"
)

// CommitSigner knows how to sign a commit's payload, returning the armored
// signature git keeps in the gpgsig header (verify.Signer is one).
type CommitSigner interface {
	Sign(message io.Reader) ([]byte, error)
}

// TipVerifier knows how to tell whether the tip of the work branch was
// written by the controller (verify.TipVerifier is one).
type TipVerifier interface {
	VerifyTip(s storer.EncodedObjectStorer, tip plumbing.Hash) error
}

// OwnVerifier is a CommitSigner that also tells whether a commit was
// signed by its own key (verify.Signer is one): the store checks with it
// the records only the controller writes.
type OwnVerifier interface {
	VerifyOwn(s storer.EncodedObjectStorer, tip plumbing.Hash) error
}

// sign signs c with the store's Signer, when it has one.
func (g *Store) sign(c *object.Commit) error {
	if g.opts.Signer == nil {
		return nil
	}
	payload := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return err
	}
	r, err := payload.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	sig, err := g.opts.Signer.Sign(r)
	if err != nil {
		return fmt.Errorf("failed to sign the commit: %w", err)
	}
	c.PGPSignature = string(sig)
	return nil
}

// writeSigned signs c (when the store signs) and stores it.
func (g *Store) writeSigned(s storer.EncodedObjectStorer, c *object.Commit) (plumbing.Hash, error) {
	if err := g.sign(c); err != nil {
		return plumbing.ZeroHash, err
	}
	o := s.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	if s.HasEncodedObject(o.Hash()) == nil {
		return o.Hash(), nil
	}
	return s.SetEncodedObject(o)
}

// verifyTip refuses a tip the store's WorkVerifier does not accept.
func (g *Store) verifyTip(s storer.EncodedObjectStorer, tip plumbing.Hash) error {
	if g.opts.WorkVerifier == nil {
		return nil
	}
	if err := g.opts.WorkVerifier.VerifyTip(s, tip); err != nil {
		return &works.RefusedError{Commit: tip.String(), Where: g.worksEP.Safe, Err: err}
	}
	return nil
}

package verify

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// TipVerifier accepts a commit only when it is signed by a key of a
// trusted-keys file, read again whenever a new commit is checked: a key
// added to the file (a rotated Secret) is trusted from the next check on,
// without a restart. The last commit that verified is remembered.
type TipVerifier struct {
	// Keys is the trusted-keys file or folder.
	Keys   string
	Limits Limits

	mu       sync.Mutex
	verified plumbing.Hash
}

// VerifyTip returns nil when tip is signed by a trusted key, else an
// *Error (or the error reading the keys).
func (t *TipVerifier) VerifyTip(s Objects, tip plumbing.Hash) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tip == t.verified {
		return nil
	}
	keys, err := ReadKeys(t.Keys, t.Limits)
	if err != nil {
		return err
	}
	if err := New(keys, t.Limits).Revision(s, tip.String(), "", ModeTip).Error(); err != nil {
		return err
	}
	t.verified = tip
	return nil
}

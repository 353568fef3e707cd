package agent

import (
	"context"

	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/secrets/keys"
)

// keys returns what decrypts this member's encrypted objects, read again
// before each apply so a rotated key takes effect without a restart. Keys
// that cannot be read fail the encrypted objects alone, with the reason.
func (a *Agent) keys(ctx context.Context) apply.Decrypter {
	if a.opts.Keys == nil {
		return nil
	}
	k, err := a.opts.Keys.Keyring(ctx, a.opts.Cluster)
	if err != nil {
		return keys.Failing{Err: err}
	}
	return k
}

package controller

import (
	"context"

	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/secrets/keys"
)

// keys returns what decrypts cluster's encrypted objects, read again
// before each apply so a rotated key takes effect without a restart. Keys
// that cannot be read fail the encrypted objects alone, with the reason.
func (c *Controller) keys(ctx context.Context, cluster string) apply.Decrypter {
	if c.opts.Keys == nil {
		return nil
	}
	k, err := c.opts.Keys.Keyring(ctx, cluster)
	if err != nil {
		return keys.Failing{Err: err}
	}
	return k
}

package secrets

import (
	"context"
	"errors"
	"fmt"

	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// keyServer is the in-process sops key service of one Decrypt: it opens
// age-encrypted data keys with the keyring's identities and nothing else.
// sops' own server would also read SOPS_AGE_KEY*, ~/.config/sops/age and
// ~/.ssh, run SOPS_AGE_KEY_CMD, or call PGP, cloud KMS and Vault; a
// member's keys must come only from its decryption Secret, and a file from
// Git must not make propagit reach a network service.
type keyServer struct {
	ids sopsage.ParsedIdentities
}

// Decrypt opens an age stanza with the keyring's identities and refuses
// every other key type.
func (s keyServer) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	k, ok := req.GetKey().GetKeyType().(*keyservice.Key_AgeKey)
	if !ok {
		return nil, unsupported("only age keys are used")
	}
	// With no identities sops' MasterKey would load them from the
	// environment: never let it.
	if len(s.ids) == 0 {
		return nil, errors.New("no age identity")
	}
	mk := &sopsage.MasterKey{Recipient: k.AgeKey.GetRecipient(), EncryptedKey: string(req.GetCiphertext())}
	s.ids.ApplyToMasterKey(mk)
	plain, err := mk.Decrypt()
	if err != nil {
		return nil, fmt.Errorf("age recipient %s: %w", k.AgeKey.GetRecipient(), err)
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

// Encrypt is refused: propagit only decrypts.
func (keyServer) Encrypt(context.Context, *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	return nil, unsupported("propagit does not encrypt")
}

package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// Decrypter knows how to turn a SOPS-encrypted object into the plaintext
// object to apply. *secrets.Keyring is one, holding a member's age keys.
type Decrypter interface {
	Decrypt(obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

var _ Decrypter = (*secrets.Keyring)(nil)

// keyring boxes a Decrypter for an atomic pointer.
type keyring struct{ Decrypter }

// UseKeys sets what decrypts SOPS-encrypted objects from now on, so keys
// can be rotated without a new Manager; nil refuses them (each fails
// alone). Safe to call while the Manager works.
func (m *Manager) UseKeys(d Decrypter) {
	if d == nil {
		m.keys.Store(nil)
		return
	}
	m.keys.Store(&keyring{d})
}

// decrypt replaces each encrypted item's object, already stamped with the
// digest of its ciphertext, by its decryption, in memory only: the digest
// then changes only when Git does, and drift is found by comparing the
// decrypted object with the live one, never by storing plaintext. An item
// that cannot be decrypted fails alone and is not applied, so the member
// keeps its current value; the message names the reason and the age
// recipients, never a value.
func (m *Manager) decrypt(p *plan) {
	keys := m.keys.Load()
	for _, it := range p.items {
		if it.done || !sealed.IsEncrypted(it.obj.Object) {
			continue
		}
		if keys == nil {
			it.fail("is SOPS-encrypted and no decryption key is configured (--decryption-secret); not applied, the member keeps its current copy")
			continue
		}
		obj, err := keys.Decrypt(it.obj)
		if err != nil {
			it.fail("was not decrypted, so it is not applied and the member keeps its current copy: %v", err)
			continue
		}
		it.obj = obj
	}
}

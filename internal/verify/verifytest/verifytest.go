// Package verifytest makes signing keys for tests: SSH ed25519 and OpenPGP
// keys generated on the spot, in the forms the CLI reads (a private key
// file for --works-signing-key, a trusted-keys line or block for
// --trusted-keys), and commits signed with them.
package verifytest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/propagit/propagit/internal/verify"
)

// Key is a generated signing key.
type Key struct {
	// Signer signs with it (go-git's CommitOptions.Signer accepts it).
	Signer *verify.Signer
	// Private is the private key file's content.
	Private []byte
	// Public is its trusted-keys entry (an allowed_signers line, or an
	// armored OpenPGP public key).
	Public string
	// Entity is the OpenPGP entity (nil for SSH keys).
	Entity *openpgp.Entity
	// SSH is the SSH private key (nil for OpenPGP keys).
	SSH ed25519.PrivateKey
}

// SSHKey generates an ed25519 key whose allowed_signers line names
// principal; options ("valid-before=\"20200101\"") go before the key.
func SSHKey(t testing.TB, principal string, options ...string) *Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, principal)
	if err != nil {
		t.Fatal(err)
	}
	data := pem.EncodeToMemory(block)
	s, err := verify.ParseSigner(data)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	line := principal + " "
	for _, o := range options {
		line += o + " "
	}
	line += string(bytes.TrimSpace(ssh.MarshalAuthorizedKey(pub))) + "\n"
	return &Key{Signer: s, Private: data, Public: line, SSH: priv}
}

// PGPKey generates an OpenPGP key for name <email>; cfg (nil for the
// defaults) sets its algorithm, creation time and lifetime.
func PGPKey(t testing.TB, name, email string, cfg *packet.Config) *Key {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return FromEntity(t, e)
}

// FromEntity wraps an OpenPGP entity with its private key.
func FromEntity(t testing.TB, e *openpgp.Entity) *Key {
	t.Helper()
	var priv bytes.Buffer
	w, err := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := verify.ParseSigner(priv.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := s.PublicKey("")
	if err != nil {
		t.Fatal(err)
	}
	return &Key{Signer: s, Private: priv.Bytes(), Public: pub, Entity: e}
}

// WriteFile writes content to name in a new temporary folder and returns
// its path.
func WriteFile(t testing.TB, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TrustedKeys writes the public entries of keys to one trusted-keys file
// and returns its path.
func TrustedKeys(t testing.TB, keys ...*Key) string {
	t.Helper()
	var b bytes.Buffer
	for _, k := range keys {
		b.WriteString(k.Public)
	}
	return WriteFile(t, "trusted-keys", b.Bytes())
}

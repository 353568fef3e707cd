package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Signer signs commits with one private key: an unencrypted OpenSSH
// private key (ed25519 advised) or an armored OpenPGP private key. Its
// Sign method is go-git's Signer, so it signs commits made with
// git.CommitOptions too.
type Signer struct {
	ssh ssh.Signer
	pgp *openpgp.Entity
}

// maxPrivateKeyBytes bounds a signing key file.
const maxPrivateKeyBytes = 64 << 10

// ReadSigner reads a signing key file.
func ReadSigner(path string) (*Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the signing key: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPrivateKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read the signing key %s: %w", path, err)
	}
	if len(data) > maxPrivateKeyBytes {
		return nil, fail(ErrTooLarge, "signing key %s: larger than %d bytes", path, maxPrivateKeyBytes)
	}
	s, err := ParseSigner(data)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

// ParseSigner parses an unencrypted OpenSSH private key or an armored
// OpenPGP private key.
func ParseSigner(data []byte) (*Signer, error) {
	if bytes.Contains(data, []byte(pgpPrivateBegin)) {
		el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("not an OpenPGP private key: %w", err)
		}
		if len(el) != 1 {
			return nil, fmt.Errorf("%d OpenPGP keys; want one", len(el))
		}
		e := el[0]
		if e.PrivateKey == nil || e.PrivateKey.Encrypted {
			return nil, errors.New("the OpenPGP private key is missing or protected by a passphrase; give an unprotected key (a mounted Secret)")
		}
		return &Signer{pgp: e}, nil
	}
	k, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, errors.New("the SSH private key is protected by a passphrase; give an unprotected key (a mounted Secret)")
		}
		return nil, fmt.Errorf("neither an OpenSSH nor an OpenPGP private key: %w", err)
	}
	return &Signer{ssh: k}, nil
}

// Sign returns the armored signature of message, as git stores it in a
// commit's gpgsig header.
func (s *Signer) Sign(message io.Reader) ([]byte, error) {
	if s.pgp != nil {
		var b bytes.Buffer
		if err := openpgp.ArmoredDetachSign(&b, s.pgp, message, nil); err != nil {
			return nil, fmt.Errorf("failed to sign: %w", err)
		}
		return b.Bytes(), nil
	}
	sig, err := sshsig.Sign(message, s.ssh, sshsig.HashSHA512, NamespaceGit)
	if err != nil {
		return nil, fmt.Errorf("failed to sign: %w", err)
	}
	return sshsig.Armor(sig), nil
}

// Fingerprint names the key: OpenPGP fingerprint or SSH SHA256
// fingerprint.
func (s *Signer) Fingerprint() string {
	if s.pgp != nil {
		return fingerprint(s.pgp)
	}
	return ssh.FingerprintSHA256(s.ssh.PublicKey())
}

// PublicKey returns the key's public half as a trusted-keys file holds it:
// an armored OpenPGP public key, or an allowed_signers line for principal
// limited to the "git" namespace.
func (s *Signer) PublicKey(principal string) (string, error) {
	if s.pgp != nil {
		var b bytes.Buffer
		w, err := armorPublic(&b)
		if err != nil {
			return "", err
		}
		if err := s.pgp.Serialize(w); err != nil {
			return "", err
		}
		if err := w.Close(); err != nil {
			return "", err
		}
		return b.String() + "\n", nil
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.ssh.PublicKey())))
	return fmt.Sprintf("%s namespaces=%q %s\n", principal, NamespaceGit, line), nil
}

// armorPublic opens an OpenPGP public key armor on w.
func armorPublic(w io.Writer) (io.WriteCloser, error) {
	return armor.Encode(w, openpgp.PublicKeyType, nil)
}

// VerifyOwn returns nil when tip is signed by this very key: a record only
// the key's holder can have written, such as the controller's own state
// kept in a repository that others (pull agents) may push to.
func (s *Signer) VerifyOwn(objs Objects, tip plumbing.Hash) error {
	pub, err := s.PublicKey("propagit")
	if err != nil {
		return err
	}
	limits := DefaultLimits()
	keys, err := ParseKeys([]byte(pub), limits)
	if err != nil {
		return err
	}
	return New(keys, limits).Revision(objs, tip.String(), "", ModeTip).Error()
}

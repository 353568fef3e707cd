package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Sentinel errors; every failure wraps exactly one, and Reason names it.
var (
	ErrUnsigned     = errors.New("not signed")
	ErrUntrusted    = errors.New("signed by a key that is not trusted")
	ErrBadSignature = errors.New("bad signature")
	ErrMalformed    = errors.New("malformed signature")
	ErrKeyExpired   = errors.New("key expired")
	ErrKeyRevoked   = errors.New("key revoked")
	ErrTooLarge     = errors.New("too large")
	ErrTooManyKeys  = errors.New("too many keys")
	ErrTooMany      = errors.New("too many commits")
)

// Reasons, for metrics labels and machine-readable output.
const (
	ReasonUnsigned     = "Unsigned"
	ReasonUntrusted    = "UntrustedKey"
	ReasonBadSignature = "BadSignature"
	ReasonMalformed    = "MalformedSignature"
	ReasonKeyExpired   = "KeyExpired"
	ReasonKeyRevoked   = "KeyRevoked"
	ReasonTooLarge     = "TooLarge"
	ReasonTooMany      = "TooManyCommits"
	ReasonError        = "Error"
)

// Reasons lists every reason, for metrics.
var Reasons = []string{ReasonUnsigned, ReasonUntrusted, ReasonBadSignature, ReasonMalformed, ReasonKeyExpired,
	ReasonKeyRevoked, ReasonTooLarge, ReasonTooMany, ReasonError}

// Reason names err's sentinel ("" for nil).
func Reason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{ErrUnsigned, ReasonUnsigned}, {ErrUntrusted, ReasonUntrusted}, {ErrBadSignature, ReasonBadSignature},
		{ErrMalformed, ReasonMalformed}, {ErrKeyExpired, ReasonKeyExpired}, {ErrKeyRevoked, ReasonKeyRevoked},
		{ErrTooLarge, ReasonTooLarge}, {ErrTooMany, ReasonTooMany},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	if err == nil {
		return ""
	}
	return ReasonError
}

// Methods of a signature.
const (
	MethodOpenPGP = "openpgp"
	MethodSSH     = "ssh"
)

// NamespaceGit is the SSH signature namespace git signs commits in.
const NamespaceGit = "git"

// Result is the verdict on one commit.
type Result struct {
	// Commit is the full hash.
	Commit string `json:"commit"`
	// Method is how it is signed ("" when it is not).
	Method string `json:"method,omitempty"`
	// Key is the signing key's fingerprint (OpenPGP, upper-case hex) or
	// SHA256 fingerprint (SSH), when the signature names one.
	Key string `json:"key,omitempty"`
	// Signer is who the trusted key belongs to: the OpenPGP primary
	// identity, or the allowed_signers principals.
	Signer string `json:"signer,omitempty"`
	// Reason is "" when the commit verifies, else one of Reasons.
	Reason string `json:"reason,omitempty"`
	// Message is Err's text, for JSON.
	Message string `json:"message,omitempty"`
	// Err is why it does not verify; nil when it does.
	Err error `json:"-"`
}

// OK reports whether the commit verifies.
func (r Result) OK() bool { return r.Err == nil }

// Short is the commit's hash shortened for messages.
func (r Result) Short() string { return shortHash(r.Commit) }

// String says who signed the commit, or why it does not verify.
func (r Result) String() string {
	if r.Err != nil {
		return fmt.Sprintf("commit %s: %v", r.Short(), r.Err)
	}
	return fmt.Sprintf("commit %s: signed by %s (%s %s)", r.Short(), r.Signer, r.Method, r.Key)
}

// Verifier checks commit signatures against trusted keys.
type Verifier struct {
	keys   *Keys
	limits Limits
	// Now is the time keys are judged at (time.Now when nil).
	Now func() time.Time
}

// New returns a Verifier of keys.
func New(keys *Keys, limits Limits) *Verifier {
	return &Verifier{keys: keys, limits: limits}
}

// Keys returns the trusted keys.
func (v *Verifier) Keys() *Keys { return v.keys }

func (v *Verifier) now() time.Time {
	if v.Now == nil {
		return time.Now()
	}
	return v.Now()
}

// Commit verifies one commit's signature.
func (v *Verifier) Commit(c *object.Commit) Result {
	r := Result{Commit: c.Hash.String()}
	r.Err = v.check(c, &r)
	if r.Err != nil {
		r.Reason, r.Message = Reason(r.Err), r.Err.Error()
	}
	return r
}

// check fills r's method, key and signer, and returns why c does not
// verify.
func (v *Verifier) check(c *object.Commit, r *Result) error {
	sig := c.PGPSignature
	if strings.TrimSpace(sig) == "" {
		return ErrUnsigned
	}
	if v.limits.MaxSignatureBytes > 0 && len(sig) > v.limits.MaxSignatureBytes {
		return fail(ErrTooLarge, "signature of %d bytes, more than %d", len(sig), v.limits.MaxSignatureBytes)
	}
	payload := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return fmt.Errorf("failed to encode the signed payload: %w", err)
	}
	signed, err := payload.Reader()
	if err != nil {
		return err
	}
	defer signed.Close()
	trimmed := strings.TrimSpace(sig)
	switch {
	case strings.HasPrefix(trimmed, "-----BEGIN SSH SIGNATURE-----"):
		r.Method = MethodSSH
		return v.checkSSH([]byte(trimmed), signed, r)
	case strings.HasPrefix(trimmed, "-----BEGIN PGP SIGNATURE-----"):
		r.Method = MethodOpenPGP
		return v.checkPGP(trimmed, signed, r)
	}
	return fail(ErrMalformed, "neither an OpenPGP nor an SSH signature (X.509 signatures are not supported)")
}

// checkSSH verifies an armored SSH signature of signed.
func (v *Verifier) checkSSH(armored []byte, signed io.Reader, r *Result) error {
	if n := bytes.Count(armored, []byte("-----BEGIN SSH SIGNATURE-----")); n > 1 {
		return fail(ErrMalformed, "%d signatures in one commit", n)
	}
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return fail(ErrMalformed, "SSH signature: %v", err)
	}
	r.Key = ssh.FingerprintSHA256(sig.PublicKey)
	if sig.Namespace != NamespaceGit {
		return fail(ErrBadSignature, "SSH signature for namespace %q, not %q", sig.Namespace, NamespaceGit)
	}
	var key *sshKey
	for i := range v.keys.ssh {
		k := &v.keys.ssh[i]
		if bytes.Equal(k.key.Marshal(), sig.PublicKey.Marshal()) && k.allows(NamespaceGit) {
			key = k
			break
		}
	}
	if key == nil {
		return fail(ErrUntrusted, "SSH key %s is not in the trusted keys", r.Key)
	}
	r.Signer = key.principals
	if err := key.window(v.now()); err != nil {
		return err
	}
	if err := sshsig.Verify(signed, sig, key.key, sig.HashAlgorithm, NamespaceGit); err != nil {
		return fail(ErrBadSignature, "SSH signature by %s does not match the commit: %v", r.Key, err)
	}
	return nil
}

// checkPGP verifies an armored OpenPGP signature of signed.
func (v *Verifier) checkPGP(armored string, signed io.Reader, r *Result) error {
	if n := strings.Count(armored, "-----BEGIN PGP SIGNATURE-----"); n > 1 {
		return fail(ErrMalformed, "%d signatures in one commit", n)
	}
	issuer, err := pgpIssuer(armored)
	if err != nil {
		return err
	}
	r.Key = issuer
	cfg := &packet.Config{Time: v.now}
	entity, err := openpgp.CheckArmoredDetachedSignature(v.keys.pgp, signed, strings.NewReader(armored), cfg)
	if entity != nil {
		r.Key, r.Signer = fingerprint(entity), identity(entity)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return fail(ErrUntrusted, "OpenPGP key %s is not in the trusted keys", r.Key)
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return fail(ErrKeyRevoked, "OpenPGP key %s (%s) is revoked", r.Key, r.Signer)
	case errors.Is(err, pgperrors.ErrKeyExpired), errors.Is(err, pgperrors.ErrSignatureExpired):
		return fail(ErrKeyExpired, "OpenPGP key %s (%s): %v", r.Key, r.Signer, err)
	}
	return fail(ErrBadSignature, "OpenPGP signature by %s does not verify: %v", r.Key, err)
}

// pgpIssuer returns the key ID (or fingerprint) an armored OpenPGP
// signature names, in upper-case hex.
func pgpIssuer(armored string) (string, error) {
	block, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return "", fail(ErrMalformed, "OpenPGP signature: %v", err)
	}
	p, err := packet.NewReader(block.Body).Next()
	if err != nil {
		return "", fail(ErrMalformed, "OpenPGP signature: %v", err)
	}
	sig, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return "", fail(ErrMalformed, "OpenPGP signature: a %T packet, not a signature", p)
	case len(sig.IssuerFingerprint) > 0:
		return fmt.Sprintf("%X", sig.IssuerFingerprint), nil
	case sig.IssuerKeyId != nil:
		return fmt.Sprintf("%016X", *sig.IssuerKeyId), nil
	}
	return "", fail(ErrMalformed, "OpenPGP signature names no issuer")
}

// fingerprint is an entity's primary key fingerprint in upper-case hex.
func fingerprint(e *openpgp.Entity) string {
	return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
}

// identity is an entity's primary identity ("" when it has none).
func identity(e *openpgp.Entity) string {
	if id := e.PrimaryIdentity(); id != nil {
		return id.Name
	}
	return ""
}

// pgpName is "FINGERPRINT identity".
func pgpName(e *openpgp.Entity) string {
	return strings.TrimSpace(fingerprint(e) + " " + identity(e))
}

// shortHash shortens a commit hash for messages, as everywhere else.
func shortHash(h string) string { return workv1alpha1.ShortRevision(h) }

// reasonError is a message that matches its sentinel with errors.Is
// without repeating it.
type reasonError struct {
	msg      string
	sentinel error
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.sentinel }

// fail formats a message whose reason is sentinel.
func fail(sentinel error, format string, args ...any) error {
	return &reasonError{msg: fmt.Sprintf(format, args...), sentinel: sentinel}
}

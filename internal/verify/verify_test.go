package verify_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// TestSupplyChainCommitSignatures signs commits with OpenPGP and SSH keys
// generated here, trusted and not, and checks each verdict: who signed a
// good one, and the reason of every other.
func TestSupplyChainCommitSignatures(t *testing.T) {
	pgpGood := verifytest.PGPKey(t, "Alice", "alice@example.com", nil)
	pgpOther := verifytest.PGPKey(t, "Mallory", "mallory@example.com", nil)
	sshGood := verifytest.SSHKey(t, "bob@example.com")
	sshOther := verifytest.SSHKey(t, "eve@example.com")
	v := verifier(t, pgpGood, sshGood)
	r := newRepo(t)
	for _, tc := range []struct {
		name       string
		key        *verifytest.Key
		wantReason string
		wantSigner string
		wantMethod string
	}{
		{name: "unsigned", wantReason: verify.ReasonUnsigned},
		{name: "OpenPGP, trusted", key: pgpGood, wantSigner: "Alice <alice@example.com>", wantMethod: verify.MethodOpenPGP},
		{name: "SSH, trusted", key: sshGood, wantSigner: "bob@example.com", wantMethod: verify.MethodSSH},
		{name: "OpenPGP, not trusted", key: pgpOther, wantReason: verify.ReasonUntrusted, wantMethod: verify.MethodOpenPGP},
		{name: "SSH, not trusted", key: sshOther, wantReason: verify.ReasonUntrusted, wantMethod: verify.MethodSSH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := r.commit(tc.key)
			res := v.Commit(r.object(h))
			t.Logf("%s", res)
			if res.Reason != tc.wantReason || res.Method != tc.wantMethod {
				t.Fatalf("reason %q method %q (%v), want reason %q method %q", res.Reason, res.Method, res.Err, tc.wantReason, tc.wantMethod)
			}
			if tc.wantReason == "" && res.Signer != tc.wantSigner {
				t.Errorf("signer %q, want %q", res.Signer, tc.wantSigner)
			}
			if !strings.Contains(res.String(), h.String()[:7]) {
				t.Errorf("%q does not name the commit %s", res.String(), h)
			}
			if tc.key != nil && tc.wantReason != "" && !strings.Contains(res.String(), tc.key.Signer.Fingerprint()) &&
				!strings.Contains(res.String(), tc.key.Signer.Fingerprint()[24:]) {
				t.Errorf("%q does not name the key %s", res.String(), tc.key.Signer.Fingerprint())
			}
		})
	}
}

// TestSupplyChainTamperedCommit changes a signed commit's message and
// keeps its signature: the signature no longer matches.
func TestSupplyChainTamperedCommit(t *testing.T) {
	for _, key := range []*verifytest.Key{verifytest.PGPKey(t, "Alice", "a@example.com", nil), verifytest.SSHKey(t, "a@example.com")} {
		r := newRepo(t)
		c := r.object(r.commit(key))
		c.Message = "something else\n"
		forged := r.raw(c.PGPSignature)
		res := verifier(t, key).Commit(forged)
		if !errors.Is(res.Err, verify.ErrBadSignature) {
			t.Errorf("%s: a tampered commit gave %v, want a bad signature", key.Signer.Fingerprint(), res.Err)
		}
	}
}

// TestSupplyChainExpiredAndRevokedKeys: an OpenPGP key past its lifetime
// or revoked, and SSH keys outside their valid-after/valid-before window,
// verify nothing, each with its reason.
func TestSupplyChainExpiredAndRevokedKeys(t *testing.T) {
	r := newRepo(t)
	short := verifytest.PGPKey(t, "Short", "short@example.com", &packet.Config{KeyLifetimeSecs: 3600})
	c := r.object(r.commit(short))
	v := verifier(t, short)
	if res := v.Commit(c); !res.OK() {
		t.Fatalf("within its lifetime: %v", res.Err)
	}
	v.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if res := v.Commit(c); res.Reason != verify.ReasonKeyExpired {
		t.Errorf("expired OpenPGP key: %v, want %s", res.Err, verify.ReasonKeyExpired)
	}

	revoked := verifytest.PGPKey(t, "Gone", "gone@example.com", nil)
	c = r.object(r.commit(revoked))
	if err := revoked.Entity.RevokeKey(packet.KeyCompromised, "leaked", nil); err != nil {
		t.Fatal(err)
	}
	pub, err := verifytest.FromEntity(t, revoked.Entity).Signer.PublicKey("")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := verify.ParseKeys([]byte(pub), verify.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if res := verify.New(ks, verify.DefaultLimits()).Commit(c); res.Reason != verify.ReasonKeyRevoked {
		t.Errorf("revoked OpenPGP key: %v, want %s", res.Err, verify.ReasonKeyRevoked)
	}

	past := verifytest.SSHKey(t, "past@example.com", `valid-before="20200101Z"`)
	future := verifytest.SSHKey(t, "future@example.com", `valid-after="29990101Z"`)
	window := verifytest.SSHKey(t, "now@example.com", `valid-after="20200101Z",valid-before="29990101Z"`)
	v = verifier(t, past, future, window)
	for _, tc := range []struct {
		key  *verifytest.Key
		want string
	}{{past, verify.ReasonKeyExpired}, {future, verify.ReasonKeyExpired}, {window, ""}} {
		res := v.Commit(r.object(r.commit(tc.key)))
		if res.Reason != tc.want {
			t.Errorf("%s: %v, want reason %q", tc.key.Public, res.Err, tc.want)
		}
	}
}

// TestSupplyChainSSHNamespaces: an allowed_signers line limited to other
// namespaces does not verify commits.
func TestSupplyChainSSHNamespaces(t *testing.T) {
	r := newRepo(t)
	files := verifytest.SSHKey(t, "a@example.com", `namespaces="file"`)
	git := verifytest.SSHKey(t, "b@example.com", `namespaces="file,git"`)
	v := verifier(t, files, git)
	if res := v.Commit(r.object(r.commit(files))); res.Reason != verify.ReasonUntrusted {
		t.Errorf("key for namespace file: %v, want %s", res.Err, verify.ReasonUntrusted)
	}
	if res := v.Commit(r.object(r.commit(git))); !res.OK() {
		t.Errorf("key for namespaces file,git: %v", res.Err)
	}
}

// TestSupplyChainRotationTwoKeys: while both keys are trusted, commits of
// either verify; once the old key is removed, only the new one's do.
func TestSupplyChainRotationTwoKeys(t *testing.T) {
	r := newRepo(t)
	old, next := verifytest.SSHKey(t, "ci-2025"), verifytest.PGPKey(t, "CI 2026", "ci@example.com", nil)
	byOld, byNew := r.object(r.commit(old)), r.object(r.commit(next))
	both := verifier(t, old, next)
	if res := both.Commit(byOld); !res.OK() {
		t.Errorf("old key while both are trusted: %v", res.Err)
	}
	if res := both.Commit(byNew); !res.OK() {
		t.Errorf("new key while both are trusted: %v", res.Err)
	}
	onlyNew := verifier(t, next)
	if res := onlyNew.Commit(byOld); res.Reason != verify.ReasonUntrusted {
		t.Errorf("old key after rotation: %v, want %s", res.Err, verify.ReasonUntrusted)
	}
	if res := onlyNew.Commit(byNew); !res.OK() {
		t.Errorf("new key after rotation: %v", res.Err)
	}
}

// TestSupplyChainSignerPublicKeyRoundTrip: the public key a Signer writes
// (what propagit join hands an agent) verifies the Signer's commits.
func TestSupplyChainSignerPublicKeyRoundTrip(t *testing.T) {
	for _, k := range []*verifytest.Key{verifytest.SSHKey(t, "x"), verifytest.PGPKey(t, "X", "x@example.com", nil)} {
		s, err := verify.ParseSigner(k.Private)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := s.PublicKey("propagit-controller")
		if err != nil {
			t.Fatal(err)
		}
		ks, err := verify.ParseKeys([]byte(pub), verify.DefaultLimits())
		if err != nil {
			t.Fatalf("%s: %v", pub, err)
		}
		r := newRepo(t)
		if res := verify.New(ks, verify.DefaultLimits()).Commit(r.object(r.commit(k))); !res.OK() {
			t.Errorf("%s: %v", s.Fingerprint(), res.Err)
		}
	}
}

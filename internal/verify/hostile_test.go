package verify_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// quickly bounds how long refusing a hostile input may take.
const quickly = 2 * time.Second

// TestSupplyChainHostileSignatures: a malformed signature, a signature of
// 10 MB, two signatures in one header and an X.509 one are each refused
// quickly, with a reason and a message naming the commit.
func TestSupplyChainHostileSignatures(t *testing.T) {
	key := verifytest.SSHKey(t, "ci")
	pgp := verifytest.PGPKey(t, "CI", "ci@example.com", nil)
	v := verifier(t, key, pgp)
	r := newRepo(t)
	r.commit(key)
	good := r.object(r.commit(key)).PGPSignature
	goodPGP := r.object(r.commit(pgp)).PGPSignature
	big := armoredSSH(100 << 10)
	for _, tc := range []struct {
		name, sig, reason string
	}{
		{"malformed SSH", "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==garbage\n-----END SSH SIGNATURE-----\n", verify.ReasonMalformed},
		{"malformed OpenPGP", "-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ\n=abcd\n-----END PGP SIGNATURE-----\n", verify.ReasonMalformed},
		{"100 KB", big, verify.ReasonTooLarge},
		{"two SSH signatures", good + good, verify.ReasonMalformed},
		{"two OpenPGP signatures", goodPGP + goodPGP, verify.ReasonMalformed},
		{"X.509", "-----BEGIN SIGNED MESSAGE-----\nMIAGCSqGSIb3DQEHAqCAMIACAQEx\n-----END SIGNED MESSAGE-----\n", verify.ReasonMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := r.raw(tc.sig)
			start := time.Now()
			res := v.Commit(c)
			took := time.Since(start)
			t.Logf("%s (%s)", res, took)
			if res.Reason != tc.reason {
				t.Errorf("reason %q (%v), want %q", res.Reason, res.Err, tc.reason)
			}
			if took > quickly {
				t.Errorf("took %s, want under %s", took, quickly)
			}
			if !strings.Contains(res.String(), c.Hash.String()[:7]) {
				t.Errorf("%q does not name the commit", res)
			}
		})
	}
}

// armoredSSH is an SSH signature armor of about n bytes.
func armoredSSH(n int) string {
	return "-----BEGIN SSH SIGNATURE-----\n" + strings.Repeat(strings.Repeat("A", 70)+"\n", n/71) + "-----END SSH SIGNATURE-----\n"
}

// TestSupplyChainHugeSignature: a commit whose signature is 10 MB is
// refused before go-git decodes it (which would take minutes), in both
// modes, with the commit named.
func TestSupplyChainHugeSignature(t *testing.T) {
	key := verifytest.SSHKey(t, "ci")
	v := verifier(t, key)
	r := newRepo(t)
	base := r.commit(key)
	h := r.store(armoredSSH(10 << 20))
	for _, mode := range []verify.Mode{verify.ModeTip, verify.ModeAll} {
		start := time.Now()
		rep := v.Revision(r.r.Storer, h.String(), base.String(), mode)
		took := time.Since(start)
		err := rep.Error()
		t.Logf("%s: %v (%s)", mode, err, took)
		if verify.Reason(err) != verify.ReasonTooLarge || !strings.Contains(fmt.Sprint(err), h.String()[:7]) {
			t.Errorf("%s: %v, want %s naming %s", mode, err, verify.ReasonTooLarge, h.String()[:7])
		}
		if took > quickly {
			t.Errorf("%s: took %s, want under %s", mode, took, quickly)
		}
	}
}

// TestSupplyChainHostileKeyFiles: a key file with thousands of keys, one
// over the size limit, one holding a private key and one with an unknown
// allowed_signers option are refused quickly with a clear error.
func TestSupplyChainHostileKeyFiles(t *testing.T) {
	key := verifytest.SSHKey(t, "ci")
	line := key.Public
	pgp := verifytest.PGPKey(t, "CI", "ci@example.com", nil)
	for _, tc := range []struct {
		name, content string
		want          error
		text          string
	}{
		{"thousands of SSH keys", strings.Repeat(line, 5000), verify.ErrTooManyKeys, "5000 keys, more than 256"},
		{"thousands of OpenPGP blocks", strings.Repeat(pgp.Public, 1000), nil, "than"},
		{"three hundred OpenPGP keys", strings.Repeat(pgp.Public, 300), verify.ErrTooManyKeys, "300 keys, more than 256"},
		{"over the size limit", strings.Repeat("# padding\n", 200<<10), verify.ErrTooLarge, "bytes"},
		{"a private key", string(key.Private), nil, "private key"},
		{"an OpenPGP private key", string(pgp.Private), nil, "private key"},
		{"an unknown option", "ci unknown-opt " + strings.SplitN(line, " ", 2)[1], nil, `unknown option "unknown-opt"`},
		{"a certificate authority", "ci cert-authority " + strings.SplitN(line, " ", 2)[1], nil, "cert-authority"},
		{"a bad validity date", `ci valid-before="tomorrow" ` + strings.SplitN(line, " ", 2)[1], nil, "valid-before"},
		{"nothing", "# only a comment\n", nil, "no key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := verifytest.WriteFile(t, "keys", []byte(tc.content))
			start := time.Now()
			_, err := verify.ReadKeys(p, verify.DefaultLimits())
			took := time.Since(start)
			t.Logf("%v (%s)", err, took)
			switch {
			case err == nil:
				t.Fatal("accepted")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("error %v, want %v", err, tc.want)
			case !strings.Contains(err.Error(), tc.text):
				t.Errorf("error %q does not say %q", err, tc.text)
			case !strings.Contains(err.Error(), p):
				t.Errorf("error %q does not name the file", err)
			}
			if took > quickly {
				t.Errorf("took %s, want under %s", took, quickly)
			}
		})
	}
}

// TestSupplyChainKeysFolder reads a mounted Secret's folder: each key file
// counts, hidden entries (..data) do not.
func TestSupplyChainKeysFolder(t *testing.T) {
	a, b := verifytest.SSHKey(t, "a"), verifytest.PGPKey(t, "B", "b@example.com", nil)
	dir := t.TempDir()
	for name, content := range map[string]string{"old": a.Public, "new.asc": b.Public, "..data-skip": "not a key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := verify.ReadKeys(dir, verify.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 2 {
		t.Errorf("%d keys, want 2: %v", ks.Len(), ks.Describe())
	}
	r := newRepo(t)
	v := verify.New(ks, verify.DefaultLimits())
	for _, k := range []*verifytest.Key{a, b} {
		if res := v.Commit(r.object(r.commit(k))); !res.OK() {
			t.Errorf("%s: %v", k.Signer.Fingerprint(), res.Err)
		}
	}
}

package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// sourceVerifyOptions say which commits of the source must be signed and
// by which keys (never keys from the fleet repository).
type sourceVerifyOptions struct {
	mode        string
	trustedKeys string
	since       string
}

func (o *sourceVerifyOptions) bindFlags(f *pflag.FlagSet) {
	f.StringVar(&o.mode, "verify-commits", "off", `commit signatures the source must carry: "off", "tip" (the commit applied must be signed by a trusted key) or "all" (every commit since the last verified one, both sides of merges included)`)
	f.StringVar(&o.trustedKeys, "trusted-keys", "", "file or folder (a mounted Secret) of the trusted keys: OpenPGP armored public keys and SSH allowed_signers lines; read again for every new revision")
	f.StringVar(&o.since, "verify-commits-since", "", `with --verify-commits=all, the full hash of a commit whose history is trusted as it is, until the controller has verified a revision itself (default: the whole history must be signed)`)
}

// validate checks the mode and reads the keys once, so a wrong file stops
// the process at start rather than refusing every revision.
func (o *sourceVerifyOptions) validate() error {
	mode, err := verify.ParseMode(o.mode)
	if err != nil {
		return fmt.Errorf("invalid --verify-commits: %w", err)
	}
	switch {
	case mode == verify.ModeOff && (o.trustedKeys != "" || o.since != ""):
		return fmt.Errorf("--trusted-keys and --verify-commits-since need --verify-commits=tip or all")
	case mode == verify.ModeOff:
		return nil
	case o.trustedKeys == "":
		return fmt.Errorf("--verify-commits=%s needs --trusted-keys", mode)
	case o.since != "" && mode != verify.ModeAll:
		return fmt.Errorf("--verify-commits-since goes with --verify-commits=all")
	case o.since != "" && !isFullHash(o.since):
		return fmt.Errorf("invalid --verify-commits-since %q: want a full commit hash", o.since)
	}
	_, err = verify.ReadKeys(o.trustedKeys, verify.DefaultLimits())
	return err
}

// verification returns what the controller's fetcher checks; nil when off.
func (o *sourceVerifyOptions) verification() *controller.SourceVerification {
	mode, _ := verify.ParseMode(o.mode)
	if mode == verify.ModeOff {
		return nil
	}
	return &controller.SourceVerification{Mode: mode, TrustedKeys: o.trustedKeys, Since: o.since, Limits: verify.DefaultLimits()}
}

// isFullHash reports whether s is a 40- or 64-digit hex object name.
func isFullHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// worksSigningOptions: the controller signs the commits it writes to the
// works repositories; agents verify them.
type worksSigningOptions struct {
	signingKey  string
	trustedKeys string
}

// bindSigner binds --works-signing-key (the controller).
func (o *worksSigningOptions) bindSigner(f *pflag.FlagSet) {
	f.StringVar(&o.signingKey, "works-signing-key", "", "private key (a mounted Secret) that signs every commit written to the works branch or member repositories: an unencrypted OpenSSH ed25519 key or an armored OpenPGP key; agents given its public key apply only what it signed")
}

// bindVerifier binds --works-trusted-keys (the agent).
func (o *worksSigningOptions) bindVerifier(f *pflag.FlagSet) {
	f.StringVar(&o.trustedKeys, "works-trusted-keys", "", "file or folder (a mounted Secret or ConfigMap; propagit join --works-public-key writes it) of the controller's public keys: a Work is applied only when its commit is signed by one of them (git works store); read again on every new commit")
}

// signer returns the controller's Works signer; a nil interface when not
// set (never a nil *verify.Signer inside one, which the store would call).
func (o *worksSigningOptions) signer() (gitstore.CommitSigner, error) {
	if o.signingKey == "" {
		return nil, nil
	}
	s, err := verify.ReadSigner(o.signingKey)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// verifier returns the agent's check of the Works' commits; nil when not
// set. The keys are read once here so a wrong file stops the agent.
func (o *worksSigningOptions) verifier() (*verify.TipVerifier, error) {
	if o.trustedKeys == "" {
		return nil, nil
	}
	if _, err := verify.ReadKeys(o.trustedKeys, verify.DefaultLimits()); err != nil {
		return nil, err
	}
	return &verify.TipVerifier{Keys: o.trustedKeys, Limits: verify.DefaultLimits()}, nil
}

// setWorkVerifier gives the agent's git store its check of the Works'
// commits; with the cr store the flag is refused (RBAC protects Work CRs,
// and they carry no signature).
func (o *agentOptions) setWorkVerifier() error {
	v, err := o.worksSigning.verifier()
	switch {
	case err != nil:
		return err
	case v == nil:
		return nil
	case o.store.kind != "git":
		return fmt.Errorf("--works-trusted-keys verifies the commits of the git works store; with --works-store %s the Works are protected by RBAC on the member's hub namespace", o.store.kind)
	}
	o.store.workVerifier = v
	return nil
}

// readWorksPublicKey reads join's --works-public-key into the agent's
// configuration, after checking it is a trusted-keys file of public keys.
func (o *joinOptions) readWorksPublicKey() error {
	if o.worksPublicKey == "" {
		return nil
	}
	if o.Mode != join.ModePull || o.Hub {
		return fmt.Errorf("--works-public-key is for --mode pull with the Git works store: with Works as custom resources RBAC on the member's hub namespace protects them")
	}
	data, err := os.ReadFile(o.worksPublicKey)
	if err != nil {
		return fmt.Errorf("failed to read --works-public-key: %w", err)
	}
	if _, err := verify.ParseKeys(data, verify.DefaultLimits()); err != nil {
		return fmt.Errorf("--works-public-key %s: %w", o.worksPublicKey, err)
	}
	o.WorksPublicKey = string(data)
	return nil
}

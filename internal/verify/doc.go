// Package verify decides whether a Git commit was signed by a key the
// operator trusts, and signs the commits the controller writes.
//
// Trusted keys come from a file (or a folder of files, a mounted Secret)
// outside the fleet repository, never from it: OpenPGP armored public keys
// and SSH allowed_signers lines, in any mix, up to Limits.MaxKeys keys and
// Limits.MaxKeyBytes bytes. A commit's signature is its gpgsig header:
// OpenPGP signatures are checked with github.com/ProtonMail/go-crypto (what
// go-git's Commit.Verify uses), SSH signatures (git's gpg.format=ssh, the
// namespace "git") with github.com/hiddeco/sshsig, the library Flux uses.
// No cryptography is written here.
//
// A key is judged at the time of verification, never at the time a commit
// claims (its signer chooses that): a revoked or expired OpenPGP key, or an
// SSH key outside its valid-after/valid-before window, verifies nothing.
//
// Everything read from Git is hostile: a signature larger than
// Limits.MaxSignatureBytes is refused before it is parsed, a range longer
// than Limits.MaxCommits is refused, and every failure names the commit.
//
// The package is a stage: plain data in, a Report out; it never logs.
package verify

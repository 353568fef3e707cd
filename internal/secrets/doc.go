// Package secrets reads SOPS-encrypted manifests without the SOPS tool:
// it recognises them, lists what they hold (recipients, encrypted paths)
// without decrypting, and decrypts them with age identities just before
// they are applied to a member.
//
// It implements the part of the SOPS file format that Kubernetes manifests
// use — YAML or JSON, values sealed with AES-256-GCM under a data key that
// is age-encrypted to each recipient, the MAC over the values in document
// order, the unencrypted/encrypted suffix and regex settings and
// mac_only_encrypted — and refuses the rest (PGP and cloud KMS keys,
// Shamir key groups, comment regexes) with an error that says so. Errors
// name the object, the recipients and the reason, never a decrypted value.
package secrets

// Package secrets decrypts SOPS-encrypted manifests with age identities
// just before they are applied to a member. What an encrypted object shows
// without its key (recipients, encrypted paths, changed keys) is package
// sealed's, which the pure pipeline uses.
//
// Decryption is the SOPS Go library's (its YAML and JSON stores, AES-GCM
// cipher and MAC check), with an in-process key service that holds only
// the member's age identities: sops never reads keys from the environment
// or home directory here, and PGP, cloud KMS and Vault keys are refused
// without contacting anything. Errors name the object, the recipients and
// the reason, never a decrypted value. (sops' audit package, linked with
// the library, reads /etc/sops/audit.yaml once at start-up; propagit's
// image has none.)
package secrets

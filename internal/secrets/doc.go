// Package secrets decrypts SOPS-encrypted manifests with age identities
// just before they are applied to a member. What an encrypted object shows
// without its key (recipients, encrypted paths, changed keys) is package
// sealed's, which the pure pipeline uses.
//
// Decryption is a small reader of sops' file format written for
// propagit, not the SOPS library (which links every key service and an
// audit package that reads /etc/sops/audit.yaml at start-up): age
// (filippo.io/age) opens the data key, Shamir shares of age key groups
// are combined, the standard library's AES-256-GCM opens each value bound
// to its path, and the MAC is checked over the values in document order
// as sops computes it. It reads YAML and JSON documents, the suffix and
// regex rules and mac_only_encrypted; it refuses comment regexes, and
// never reads PGP, cloud KMS or Vault stanzas, keys from the environment
// or anything on disk. A document decrypts only into the object it was
// committed as. Errors name the object, the path, the recipients and the
// reason, never a decrypted value.
package secrets

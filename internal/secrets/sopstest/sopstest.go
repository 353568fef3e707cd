// Package sopstest writes SOPS/age-encrypted documents for tests with the
// SOPS Go library, as `sops encrypt --age … --encrypted-regex …` does, so
// no sops binary is needed to make fixtures. It is for tests only.
package sopstest

import (
	"errors"
	"fmt"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// Options are the sops settings of an encryption.
type Options struct {
	// EncryptedRegex selects the keys to encrypt; "" encrypts every value.
	EncryptedRegex string
	// EncryptedCommentRegex selects the values to encrypt by the comments
	// above them, instead of EncryptedRegex.
	EncryptedCommentRegex string
	// MACOnlyEncrypted makes the MAC cover the encrypted values only.
	MACOnlyEncrypted bool
	// ShamirThreshold, when set, puts each recipient in a key group of its
	// own and splits the data key so that this many groups recover it.
	ShamirThreshold int
	// UnencryptedRegex, EncryptedSuffix and UnencryptedSuffix are sops'
	// other rules; at most one rule may be set.
	UnencryptedRegex, EncryptedSuffix, UnencryptedSuffix string
	// JSON reads plain as JSON and writes JSON, as sops does for .json.
	JSON bool
}

// store is the sops store for opts' format.
func store(opts Options) interface {
	LoadPlainFile([]byte) (sops.TreeBranches, error)
	EmitEncryptedFile(sops.Tree) ([]byte, error)
} {
	if opts.JSON {
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}

// KubernetesOptions are the settings recommended for Secrets: data and
// stringData encrypted, metadata readable.
var KubernetesOptions = Options{EncryptedRegex: "^(data|stringData)$"}

// NewIdentity returns a fresh age identity.
func NewIdentity() *age.X25519Identity {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		panic(err)
	}
	return id
}

// Encrypt encrypts the single YAML (or, with opts.JSON, JSON) document
// plain to recipients and returns the encrypted document.
func Encrypt(plain []byte, opts Options, recipients ...*age.X25519Recipient) ([]byte, error) {
	store := store(opts)
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, err
	}
	m := sops.Metadata{
		EncryptedRegex:        opts.EncryptedRegex,
		EncryptedCommentRegex: opts.EncryptedCommentRegex,
		MACOnlyEncrypted:      opts.MACOnlyEncrypted,
		UnencryptedRegex:      opts.UnencryptedRegex,
		EncryptedSuffix:       opts.EncryptedSuffix,
		UnencryptedSuffix:     opts.UnencryptedSuffix,
		Version:               "3.13.3", // the library in go.mod; its version package would add a CLI
	}
	if opts == (Options{ShamirThreshold: opts.ShamirThreshold, MACOnlyEncrypted: opts.MACOnlyEncrypted, JSON: opts.JSON}) {
		m.UnencryptedSuffix = sops.DefaultUnencryptedSuffix
	}
	var group sops.KeyGroup
	for _, r := range recipients {
		k, err := sopsage.MasterKeyFromRecipient(r.String())
		if err != nil {
			return nil, err
		}
		if opts.ShamirThreshold > 0 {
			m.KeyGroups = append(m.KeyGroups, sops.KeyGroup{k})
		} else {
			group = append(group, k)
		}
	}
	if opts.ShamirThreshold > 0 {
		m.ShamirThreshold = opts.ShamirThreshold
	} else {
		m.KeyGroups = []sops.KeyGroup{group}
	}
	tree := sops.Tree{Branches: branches, Metadata: m}
	key, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()})
	if len(errs) > 0 {
		return nil, fmt.Errorf("encrypting the data key: %w", errors.Join(errs...))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(key, cipher)
	if err != nil {
		return nil, err
	}
	tree.Metadata.LastModified = time.Now().UTC()
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	return store.EmitEncryptedFile(tree)
}

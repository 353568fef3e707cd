// Package sopstest writes SOPS/age-encrypted documents for tests, the way
// `sops --encrypt --age … --encrypted-regex …` does, so no sops binary is
// needed to make fixtures. It is for tests only.
package sopstest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"regexp"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	yaml "go.yaml.in/yaml/v3"
)

// Options are the sops settings of an encryption.
type Options struct {
	// EncryptedRegex selects the keys to encrypt; "" encrypts every value.
	EncryptedRegex string
	// MACOnlyEncrypted makes the MAC cover the encrypted values only.
	MACOnlyEncrypted bool
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

// Encrypt encrypts the single YAML document plain to recipients and
// returns the encrypted YAML document.
func Encrypt(plain []byte, opts Options, recipients ...*age.X25519Recipient) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(plain, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a YAML mapping: %v", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	e := &encrypter{key: key, mac: sha512.New(), opts: opts}
	if opts.EncryptedRegex != "" {
		e.re = regexp.MustCompile(opts.EncryptedRegex)
	}
	if opts.MACOnlyEncrypted {
		e.mac.Write([]byte{0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0xb,
			0xb, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69})
	}
	top := doc.Content[0]
	if err := e.walk(top, nil); err != nil {
		return nil, err
	}
	meta, err := e.metadata(recipients)
	if err != nil {
		return nil, err
	}
	top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "sops"}, meta)
	return yaml.Marshal(&doc)
}

type encrypter struct {
	key  []byte
	mac  hash.Hash
	opts Options
	re   *regexp.Regexp
}

func (e *encrypter) walk(n *yaml.Node, path []string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := e.walk(n.Content[i+1], append(path[:len(path):len(path)], n.Content[i].Value)); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := e.walk(c, path); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		return e.leaf(n, path)
	}
	return nil
}

func (e *encrypter) leaf(n *yaml.Node, path []string) error {
	if n.ShortTag() == "!!null" {
		return nil
	}
	enc := e.re == nil
	for _, p := range path {
		if e.re != nil && e.re.MatchString(p) {
			enc = true
		}
	}
	typ, text := "str", n.Value
	switch n.ShortTag() {
	case "!!int":
		typ = "int"
	case "!!float":
		typ = "float"
	case "!!bool":
		typ = "bool"
		text = map[bool]string{true: "True", false: "False"}[n.Value == "true"]
	}
	if !e.opts.MACOnlyEncrypted || enc {
		e.mac.Write([]byte(text))
	}
	if !enc || text == "" {
		return nil
	}
	v, err := e.seal([]byte(text), strings.Join(path, ":")+":", typ)
	if err != nil {
		return err
	}
	n.Value, n.Tag, n.Style = v, "!!str", 0
	return nil
}

func (e *encrypter) seal(plain []byte, aad, typ string) (string, error) {
	block, err := aes.NewCipher(e.key)
	if err != nil {
		return "", err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, 32)
	if err != nil {
		return "", err
	}
	iv := make([]byte, 32)
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	out := gcm.Seal(nil, iv, plain, []byte(aad))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]",
		b64(out[:len(out)-16]), b64(iv), b64(out[len(out)-16:]), typ), nil
}

func (e *encrypter) metadata(recipients []*age.X25519Recipient) (*yaml.Node, error) {
	type ageKey struct {
		Recipient string `yaml:"recipient"`
		Enc       string `yaml:"enc"`
	}
	var keys []ageKey
	for _, r := range recipients {
		var buf bytes.Buffer
		aw := armor.NewWriter(&buf)
		w, err := age.Encrypt(aw, r)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(e.key); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		if err := aw.Close(); err != nil {
			return nil, err
		}
		keys = append(keys, ageKey{Recipient: r.String(), Enc: buf.String()})
	}
	now := time.Now().UTC().Format(time.RFC3339)
	mac, err := e.seal([]byte(fmt.Sprintf("%X", e.mac.Sum(nil))), now, "str")
	if err != nil {
		return nil, err
	}
	meta := struct {
		Age              []ageKey `yaml:"age"`
		LastModified     string   `yaml:"lastmodified"`
		MAC              string   `yaml:"mac"`
		EncryptedRegex   string   `yaml:"encrypted_regex,omitempty"`
		MACOnlyEncrypted bool     `yaml:"mac_only_encrypted,omitempty"`
		Version          string   `yaml:"version"`
	}{keys, now, mac, e.opts.EncryptedRegex, e.opts.MACOnlyEncrypted, "3.11.0"}
	var n yaml.Node
	if err := n.Encode(meta); err != nil {
		return nil, err
	}
	return &n, nil
}

package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	yaml "go.yaml.in/yaml/v3"
)

// maxDocument bounds a document handed to Decrypt: a Secret is at most
// 1 MiB on the API server, and its ciphertext about a third more.
const maxDocument = 4 << 20

// macOnlyEncryptedInit starts the MAC of a mac_only_encrypted file, so it
// never equals the MAC of the same values without that setting (sops).
var macOnlyEncryptedInit = []byte{0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0xb,
	0xb, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69}

// encValue is sops' encoding of one sealed value.
var encValue = regexp.MustCompile(`^ENC\[AES256_GCM,data:(.*),iv:(.+),tag:(.+),type:(.+)\]$`)

// Plain is a decrypted document.
type Plain struct {
	// Object is the document without its sops section, values decrypted.
	Object map[string]any
	// Paths are the paths of the encrypted values (a list counts as one
	// value at its own path, as sops does not index list items).
	Paths [][]string
}

// Decrypt opens a SOPS document (YAML or JSON) with the first identity
// that unwraps its data key, decrypts every encrypted value and verifies
// the MAC. Errors never contain a decrypted value.
func Decrypt(doc []byte, ids []age.Identity) (*Plain, error) {
	if len(doc) > maxDocument {
		return nil, malformed("document is %d bytes, more than %d", len(doc), maxDocument)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, malformed("cannot parse: %v", err)
	}
	top, m, ok, err := splitMetadata(&root)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, malformed("no sops section")
	}
	sel, err := newSelector(m)
	if err != nil {
		return nil, err
	}
	key, err := dataKey(m, ids)
	if err != nil {
		return nil, err
	}
	w := &walker{sel: sel, key: key, mac: sha512.New(), macOnlyEnc: m.MACOnlyEncrypted, seen: map[string]bool{}}
	if m.MACOnlyEncrypted {
		w.mac.Write(macOnlyEncryptedInit)
	}
	v, err := w.value(top, nil, 0)
	if err != nil {
		return nil, err
	}
	if err := w.verify(m); err != nil {
		return nil, err
	}
	obj, _ := v.(map[string]any)
	return &Plain{Object: obj, Paths: w.paths}, nil
}

// dataKey unwraps the 32-byte data key with ids.
func dataKey(m *metadata, ids []age.Identity) ([]byte, error) {
	keys, err := m.ageKeys()
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		for _, k := range keys {
			r, err := age.Decrypt(armor.NewReader(strings.NewReader(k.Enc)), ids...)
			if err != nil {
				continue
			}
			key, err := io.ReadAll(io.LimitReader(r, 64))
			if err != nil || len(key) != 32 {
				return nil, malformed("data key for %s is not 32 bytes", k.Recipient)
			}
			return key, nil
		}
	}
	return nil, &NoKeyError{Recipients: m.recipients(), Have: recipientsOf(ids)}
}

// walker decrypts a document's values in document order and feeds them to
// the MAC, as sops does.
type walker struct {
	sel        *selector
	key        []byte
	mac        hash.Hash
	macOnlyEnc bool
	paths      [][]string
	seen       map[string]bool
}

func (w *walker) value(n *yaml.Node, path []string, depth int) (any, error) {
	if depth > 100 {
		return nil, malformed("nested more than 100 levels at %s", strings.Join(path, "."))
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, malformed("non-string key at line %d", k.Line)
			}
			if depth == 0 && k.Value == MetadataKey {
				continue
			}
			v, err := w.value(n.Content[i+1], append(path[:len(path):len(path)], k.Value), depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := w.value(c, path, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.AliasNode:
		return w.value(n.Alias, path, depth+1)
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, malformed("value at line %d: %v", n.Line, err)
		}
		return w.leaf(v, path, n.Line)
	}
	return nil, nil
}

// leaf decrypts one value when the document's settings say it is
// encrypted, and adds it to the MAC unless mac_only_encrypted exempts it.
func (w *walker) leaf(v any, path []string, line int) (any, error) {
	if v == nil {
		return nil, nil
	}
	enc := w.sel.encrypted(path)
	if enc {
		s, ok := v.(string)
		if !ok {
			return nil, malformed("value at %s (line %d) should be encrypted but is a %T", strings.Join(path, "."), line, v)
		}
		var err error
		if v, err = open(s, w.key, strings.Join(path, ":")+":"); err != nil {
			return nil, fmt.Errorf("value at %s (line %d): %w", strings.Join(path, "."), line, err)
		}
		if p := strings.Join(path, "\x00"); !w.seen[p] {
			w.seen[p] = true
			w.paths = append(w.paths, path)
		}
	}
	if !w.macOnlyEnc || enc {
		w.mac.Write(macBytes(v))
	}
	return toJSON(v), nil
}

// verify compares the computed MAC with the file's.
func (w *walker) verify(m *metadata) error {
	aad, err := m.lastModified()
	if err != nil {
		return err
	}
	want, err := open(m.MAC, w.key, aad)
	if err != nil {
		return fmt.Errorf("sops.mac: %w", err)
	}
	if got := fmt.Sprintf("%X", w.mac.Sum(nil)); want != got {
		return fmt.Errorf("%w: the values were changed after encryption", ErrMAC)
	}
	return nil
}

// open decrypts one ENC[AES256_GCM,…] value bound to aad (the value's path
// joined with ":" and a trailing ":", or the MAC's timestamp). An empty
// string stays empty, as sops leaves it unencrypted.
func open(s string, key []byte, aad string) (any, error) {
	if s == "" {
		return "", nil
	}
	m := encValue.FindStringSubmatch(s)
	if m == nil {
		return nil, malformed("not an ENC[AES256_GCM,…] value")
	}
	var parts [3][]byte
	for i := range parts {
		b, err := base64.StdEncoding.DecodeString(m[i+1])
		if err != nil {
			return nil, malformed("ENC value: invalid base64")
		}
		parts[i] = b
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, malformed("data key: %v", err)
	}
	if len(parts[1]) == 0 || len(parts[2]) != 16 {
		return nil, malformed("ENC value: bad iv or tag length")
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(parts[1]))
	if err != nil {
		return nil, malformed("ENC value: %v", err)
	}
	plain, err := gcm.Open(nil, parts[1], append(parts[0], parts[2]...), []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: a value fails authentication (tampered, or moved to another path)", ErrMAC)
	}
	return typed(plain, m[4])
}

// typed turns decrypted bytes back into the value type sops recorded.
func typed(b []byte, t string) (any, error) {
	s := string(b)
	switch t {
	case "str":
		return s, nil
	case "bytes":
		return b, nil
	case "int":
		if i, err := strconv.Atoi(s); err == nil {
			return i, nil
		}
	case "float":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	case "bool":
		if v, err := strconv.ParseBool(s); err == nil {
			return v, nil
		}
	case "time":
		var v time.Time
		if v.UnmarshalText(b) == nil {
			return v, nil
		}
	default:
		return nil, unsupported("value type %q", t)
	}
	return nil, malformed("ENC value of type %s does not parse", t)
}

// macBytes is sops' byte form of a value for the MAC.
func macBytes(v any) []byte {
	switch v := v.(type) {
	case string:
		return []byte(v)
	case []byte:
		return v
	case int:
		return []byte(strconv.Itoa(v))
	case float64:
		return []byte(strconv.FormatFloat(v, 'f', -1, 64))
	case bool:
		if v {
			return []byte("True")
		}
		return []byte("False")
	case time.Time:
		b, _ := v.MarshalText()
		return b
	}
	return []byte(fmt.Sprint(v))
}

// toJSON converts a decoded value to the types unstructured objects hold.
func toJSON(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case []byte:
		return string(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// recipientsOf lists the public keys of the X25519 identities in ids.
func recipientsOf(ids []age.Identity) []string {
	var out []string
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			out = append(out, x.Recipient().String())
		}
	}
	return out
}

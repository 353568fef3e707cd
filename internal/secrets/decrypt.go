package secrets

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"
	yaml "go.yaml.in/yaml/v3"

	"github.com/propagit/propagit/internal/secrets/sealed"
)

const (
	// maxDocument bounds a document handed to Decrypt: a Secret is at most
	// 1 MiB on the API server, and its ciphertext about a third more.
	maxDocument = 4 << 20
	// maxDepth bounds the nesting of a document, which the walk recurses.
	maxDepth = 100
	// maxValues bounds the values of a document: each may cost an AES-GCM
	// open before the MAC can tell a padded document from a real one.
	maxValues = 10000
	// maxRegex bounds each regex setting of the sops section.
	maxRegex = 1024
)

// macOnlyEncryptedPrefix starts the MAC's hash when mac_only_encrypted is
// set, so that such a MAC never equals one over every value (sops'
// constant, part of the file format).
var macOnlyEncryptedPrefix = []byte{0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0xb,
	0xb, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69}

// Plain is a decrypted document.
type Plain struct {
	// Object is the document without its sops section, values decrypted.
	Object map[string]any
	// Paths are the paths of the encrypted values (a list counts as one
	// value at its own path, as sops does not index list items).
	Paths [][]string
}

// Decrypt opens a SOPS document (YAML or JSON) with ids: the data key
// from the first age stanza of each key group that one of ids opens
// (Shamir shares combined), then every value the document's rule says is
// encrypted (AES-256-GCM, bound to its path), and checks the MAC over
// the values in document order. Errors never contain a decrypted value.
func Decrypt(doc []byte, ids []age.Identity) (*Plain, error) {
	top, err := readDocument(doc)
	if err != nil {
		return nil, err
	}
	var section *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == sealed.MetadataKey {
			section = top.Content[i+1]
		}
	}
	if section == nil || section.Kind != yaml.MappingNode {
		return nil, malformed("no sops section")
	}
	m, err := readMetadata(section)
	if err != nil {
		return nil, err
	}
	key, err := dataKey(m, ids)
	if err != nil {
		return nil, err
	}
	w := &walker{rule: m.rule, key: key, json: json.Valid(doc), mac: sha512.New()}
	if m.MACOnly {
		w.mac.Write(macOnlyEncryptedPrefix)
		w.macOnly = true
	}
	obj, _, err := w.mapping(top, nil, false)
	if err != nil {
		return nil, err
	}
	want, err := openValue(m.MAC, key, m.modified)
	if err != nil {
		return nil, fmt.Errorf("sops.mac: %w", err)
	}
	s, _ := want.(string)
	if !hmac.Equal([]byte(s), fmt.Appendf(nil, "%X", w.mac.Sum(nil))) {
		return nil, fmt.Errorf("%w: the values were changed after encryption", ErrMAC)
	}
	return &Plain{Object: obj, Paths: w.paths}, nil
}

// readDocument bounds and parses a document: its size, one YAML (or
// JSON) document whose top is a mapping, its nesting and number of
// values, and no aliases, which sops never writes.
func readDocument(doc []byte) (*yaml.Node, error) {
	if len(doc) > maxDocument {
		return nil, malformed("document is %d bytes, more than %d", len(doc), maxDocument)
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		return nil, malformed("cannot parse: %v", err)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return nil, malformed("more than one YAML document")
	}
	values := 0
	if err := checkNode(&root, 0, &values); err != nil {
		return nil, err
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, malformed("the document is not a mapping")
	}
	return root.Content[0], nil
}

// checkNode checks n and counts its values (scalars other than keys).
func checkNode(n *yaml.Node, depth int, values *int) error {
	if depth > maxDepth {
		return malformed("nested more than %d levels at line %d", maxDepth, n.Line)
	}
	if n.Kind == yaml.AliasNode {
		return malformed("YAML alias at line %d: sops does not write aliases", n.Line)
	}
	for i, c := range n.Content {
		if c.Kind == yaml.ScalarNode && (n.Kind != yaml.MappingNode || i%2 == 1) {
			if *values++; *values > maxValues {
				return malformed("more than %d values (line %d)", maxValues, c.Line)
			}
		}
		if err := checkNode(c, depth+1, values); err != nil {
			return err
		}
	}
	return nil
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

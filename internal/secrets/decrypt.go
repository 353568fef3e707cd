package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/logging"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"github.com/sirupsen/logrus"
	yaml "go.yaml.in/yaml/v3"

	"github.com/propagit/propagit/internal/secrets/sealed"
)

const (
	// maxDocument bounds a document handed to Decrypt: a Secret is at most
	// 1 MiB on the API server, and its ciphertext about a third more.
	maxDocument = 4 << 20
	// maxDepth bounds the nesting of a document: sops' stores and tree
	// walk recurse without a limit of their own.
	maxDepth = 100
	// maxValues bounds the values of a document: sops' tree walk compiles
	// the document's regex again for each (tens of µs), before the MAC can
	// tell a padded document from a real one.
	maxValues = 10000
	// maxRegex bounds each regex setting of the sops section, for the same
	// reason.
	maxRegex = 1024
)

// init silences sops' loggers, once: they write to stderr in their own
// format, and a warning about a comment it could not decrypt would carry
// the comment. Decrypt's errors say what went wrong.
func init() {
	for _, l := range logging.Loggers {
		l.SetOutput(io.Discard)
		l.SetLevel(logrus.PanicLevel)
	}
}

// Plain is a decrypted document.
type Plain struct {
	// Object is the document without its sops section, values decrypted.
	Object map[string]any
	// Paths are the paths of the encrypted values (a list counts as one
	// value at its own path, as sops does not index list items).
	Paths [][]string
}

// Decrypt opens a SOPS document (YAML or JSON) with the SOPS library: the
// data key with the first of ids that unwraps it, through a key service
// that knows only ids; then every encrypted value, and the MAC is
// verified. Errors never contain a decrypted value.
func Decrypt(doc []byte, ids []age.Identity) (*Plain, error) {
	if err := checkShape(doc); err != nil {
		return nil, err
	}
	tree, err := storeFor(doc).LoadEncryptedFile(doc)
	switch {
	case errors.Is(err, sops.MetadataNotFound):
		return nil, malformed("no sops section")
	case err != nil:
		return nil, malformed("cannot read: %v", err)
	case len(tree.Branches) != 1:
		return nil, malformed("%d documents, want one", len(tree.Branches))
	}
	if err := checkRegexes(&tree.Metadata); err != nil {
		return nil, err
	}
	key, err := dataKey(&tree.Metadata, ids)
	if err != nil {
		return nil, err
	}
	paths := sealedPaths(tree.Branches[0])
	c := &valueCipher{aes: aes.NewCipher()}
	mac, err := tree.Decrypt(key, c)
	switch {
	case err != nil && c.err != nil:
		return nil, c.err
	case err != nil:
		return nil, malformed("%v", err)
	}
	// As sops' decrypt package does: the stored MAC is sealed with the
	// data key and the lastmodified time as additional data.
	want, err := c.open(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("sops.mac: %w", err)
	}
	if s, _ := want.(string); s != mac {
		return nil, fmt.Errorf("%w: the values were changed after encryption", ErrMAC)
	}
	obj, _ := plainValue(tree.Branches[0]).(map[string]any)
	return &Plain{Object: obj, Paths: paths}, nil
}

// checkShape bounds a document before the SOPS library reads it: its size,
// one YAML (or JSON) document, its nesting and number of values, and no
// aliases, which sops never writes and its YAML store would expand
// without a limit.
func checkShape(doc []byte) error {
	if len(doc) > maxDocument {
		return malformed("document is %d bytes, more than %d", len(doc), maxDocument)
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		return malformed("cannot parse: %v", err)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return malformed("more than one YAML document")
	}
	values := 0
	return checkNode(&root, 0, &values)
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

// checkRegexes refuses a regex setting that is long, or that does not
// compile, which sops would take as matching nothing.
func checkRegexes(m *sops.Metadata) error {
	for _, s := range []struct{ name, re string }{
		{"encrypted_regex", m.EncryptedRegex}, {"unencrypted_regex", m.UnencryptedRegex},
		{"encrypted_comment_regex", m.EncryptedCommentRegex}, {"unencrypted_comment_regex", m.UnencryptedCommentRegex},
	} {
		if len(s.re) > maxRegex {
			return malformed("sops.%s is %d bytes, more than %d", s.name, len(s.re), maxRegex)
		}
		if _, err := regexp.Compile(s.re); err != nil {
			return malformed("sops.%s: %v", s.name, err)
		}
	}
	return nil
}

// storeFor picks sops' store by the document's format: JSON for a JSON
// document, YAML otherwise.
func storeFor(doc []byte) sops.EncryptedFileLoader {
	if json.Valid(doc) {
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}

// dataKey recovers the data key through a key service that holds only
// ids. A document without age keys is refused without asking any.
func dataKey(m *sops.Metadata, ids []age.Identity) ([]byte, error) {
	recipients, others := masterKeys(m)
	if len(recipients) == 0 {
		return nil, unsupported("no age key; the data key is encrypted only with %v, which propagit does not use", others)
	}
	svc := keyservice.NewCustomLocalClient(keyServer{ids: ids})
	key, err := m.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{svc}, []string{sopsage.KeyTypeIdentifier})
	if err != nil {
		return nil, &NoKeyError{Recipients: recipients, Have: recipientsOf(ids)}
	}
	if len(key) != 32 {
		return nil, malformed("the data key is %d bytes, not 32", len(key))
	}
	return key, nil
}

// valueCipher is sops' AES-GCM cipher with errors fit to show: the
// library's own can quote a decrypted value (a type that does not parse)
// and panics on some values a hostile file can hold (type:bytes). It keeps
// the last error, since the tree walk flattens it to text and stops at a
// value's; a comment's it ignores, as sops keeps a comment it cannot
// decrypt.
type valueCipher struct {
	aes aes.Cipher
	err error
}

// Decrypt opens the value at the path aad names ("data:password:").
func (c *valueCipher) Decrypt(ciphertext string, key []byte, aad string) (any, error) {
	v, err := c.open(ciphertext, key, aad)
	if err != nil {
		c.err = fmt.Errorf("value at %s: %w", strings.ReplaceAll(strings.TrimSuffix(aad, ":"), ":", "."), err)
	}
	return v, err
}

// Encrypt is not used: propagit only decrypts.
func (c *valueCipher) Encrypt(any, []byte, string) (string, error) {
	return "", unsupported("propagit does not encrypt")
}

// open decrypts one value bound to aad, classifying the library's error
// without quoting it.
func (c *valueCipher) open(ciphertext string, key []byte, aad string) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, malformed("an ENC value sops cannot decrypt")
		}
	}()
	v, err = c.aes.Decrypt(ciphertext, key, aad)
	switch {
	case err == nil:
		return v, nil
	case strings.HasPrefix(err.Error(), "Could not decrypt with AES_GCM"):
		return nil, fmt.Errorf("%w: a value fails authentication (tampered, or moved to another path)", ErrMAC)
	case !sealed.IsValue(ciphertext):
		return nil, malformed("not an ENC[AES256_GCM,…] value")
	}
	return nil, malformed("an ENC value that does not decode, or whose type does not parse")
}

// sealedPaths lists the paths of the encrypted values of a document not
// yet decrypted; a list holding one counts as one value.
func sealedPaths(b sops.TreeBranch) [][]string {
	var out [][]string
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch v := v.(type) {
		case sops.TreeBranch:
			for _, it := range v {
				if k, ok := it.Key.(string); ok {
					walk(it.Value, append(path[:len(path):len(path)], k))
				}
			}
		case []any:
			if slices.ContainsFunc(v, holdsSealed) {
				out = append(out, path)
			}
		case string:
			if sealed.IsValue(v) {
				out = append(out, path)
			}
		}
	}
	walk(b, nil)
	return out
}

func holdsSealed(v any) bool {
	switch v := v.(type) {
	case sops.TreeBranch:
		return slices.ContainsFunc(v, func(it sops.TreeItem) bool { return holdsSealed(it.Value) })
	case []any:
		return slices.ContainsFunc(v, holdsSealed)
	case string:
		return sealed.IsValue(v)
	}
	return false
}

// plainValue converts a decrypted sops tree to the types unstructured
// objects hold, without comments.
func plainValue(v any) any {
	switch v := v.(type) {
	case sops.TreeBranch:
		out := make(map[string]any, len(v))
		for _, it := range v {
			if k, ok := it.Key.(string); ok {
				out[k] = plainValue(it.Value)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if _, ok := e.(sops.Comment); !ok {
				out = append(out, plainValue(e))
			}
		}
		return out
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

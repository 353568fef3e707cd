package secrets

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// KeySuffix marks the keys of a decryption Secret that hold age identities
// (one or more AGE-SECRET-KEY-… lines), as Flux names them.
const KeySuffix = ".agekey"

// Keyring decrypts the SOPS documents rendered for one member with that
// member's age identities. It is safe for concurrent use.
type Keyring struct {
	ids   []age.Identity
	kinds []string
}

// NewKeyring parses the age identities in the keys of data that end in
// KeySuffix (a decryption Secret's data). kinds are the kinds allowed
// besides sealed.DefaultKinds. A nil or empty data gives a keyring that reports
// every document as missing its key. Errors name the key, never its value.
func NewKeyring(data map[string][]byte, kinds []string) (*Keyring, error) {
	if err := sealed.CheckKinds(kinds); err != nil {
		return nil, err
	}
	k := &Keyring{kinds: kinds}
	names := make([]string, 0, len(data))
	for name := range data {
		if strings.HasSuffix(name, KeySuffix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		ids, err := age.ParseIdentities(strings.NewReader(string(data[name])))
		if err != nil {
			return nil, fmt.Errorf("failed to parse age identities in key %q: not AGE-SECRET-KEY lines", name)
		}
		k.ids = append(k.ids, ids...)
	}
	return k, nil
}

// Recipients lists the public keys of the keyring's identities.
func (k *Keyring) Recipients() []string { return recipientsOf(k.ids) }

// Decrypt returns obj with its encrypted values decrypted from the
// original document obj carries (workv1alpha1.AnnotationSOPSDocument),
// whose MAC it verifies; obj's own metadata (labels and annotations set by
// render and overrides) is kept, its sops section and that annotation are
// dropped. The document must have been committed as obj (same
// apiVersion, kind, namespace and name): one carried by another object is
// ErrRelocated. The result lives in memory only: the caller applies it
// and forgets it.
func (k *Keyring) Decrypt(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !sealed.KindAllowed(obj.GetKind(), k.kinds) {
		return nil, unsupported("kind %s may not be encrypted (allowed: %s)", obj.GetKind(), strings.Join(append(slices.Clone(sealed.DefaultKinds), k.kinds...), ", "))
	}
	doc, ok := obj.GetAnnotations()[workv1alpha1.AnnotationSOPSDocument]
	if !ok {
		return nil, malformed("no %s annotation: the object was not loaded by propagit", workv1alpha1.AnnotationSOPSDocument)
	}
	plain, err := Decrypt([]byte(doc), k.ids)
	if err != nil {
		return nil, err
	}
	if err := bound(plain, obj); err != nil {
		return nil, err
	}
	out := obj.DeepCopy()
	delete(out.Object, sealed.MetadataKey)
	ann := out.GetAnnotations()
	delete(ann, workv1alpha1.AnnotationSOPSDocument)
	out.SetAnnotations(ann)
	for _, p := range plain.Paths {
		v, found, err := unstructured.NestedFieldNoCopy(plain.Object, p...)
		if err != nil || !found {
			continue
		}
		if err := unstructured.SetNestedField(out.Object, v, p...); err != nil {
			return nil, malformed("cannot place the value at %s", strings.Join(p, "."))
		}
	}
	if out.GetKind() == "Secret" {
		stringValues(out.Object)
		foldStringData(out.Object)
	}
	return out, nil
}

// foldStringData moves a Secret's stringData into data, base64-encoded,
// as the API server does on write: the member never stores stringData, so
// applying it would read as drift on every check. A non-string value is
// left for the API server to refuse.
func foldStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			delete(sd, k)
		}
	}
	obj["data"] = data
	if len(sd) == 0 {
		delete(obj, "stringData")
	}
}

// Package sealed reads what an encrypted (sops) object shows without its
// key: whether it is encrypted, which values and which recipients, what
// changed between two versions. The pure pipeline (load, render, diff)
// uses it; decryption lives in internal/secrets.
package sealed

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// MetadataKey is the top-level key sops adds to every document it encrypts.
const MetadataKey = "sops"

// DefaultKinds are the kinds that may be encrypted unless the operator
// allows more: only Secrets hold values worth encrypting in a manifest.
var DefaultKinds = []string{"Secret"}

// DataKinds are the only kinds --decrypt-kinds may add to DefaultKinds:
// core kinds that hold data and nothing the cluster runs or obeys (no pod
// spec, no RBAC, no webhook, no route, no volume). Restrictions are
// checked at render, where an encrypted value is only ciphertext, so a
// kind whose values a restriction must judge may never be encrypted.
// Load accepts only the core API group, so a CRD kind is never one.
var DataKinds = []string{"Secret", "ConfigMap"}

// CheckKinds refuses extra kinds (--decrypt-kinds) that are not data
// kinds, naming the first.
func CheckKinds(extra []string) error {
	for _, k := range extra {
		if !slices.Contains(DataKinds, k) {
			return fmt.Errorf("--decrypt-kinds %s: only data kinds (%s) may be SOPS-encrypted: restrictions are checked before decryption and would judge only ciphertext",
				k, strings.Join(DataKinds, ", "))
		}
	}
	return nil
}

// IsEncrypted reports whether obj is a SOPS document: it has a top-level
// sops mapping with a MAC.
func IsEncrypted(obj map[string]any) bool {
	m, ok := obj[MetadataKey].(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["mac"]
	return ok
}

// KindAllowed reports whether kind may be encrypted, given the operator's
// extra kinds; an extra kind that is not a data kind never is.
func KindAllowed(kind string, extra []string) bool {
	return slices.Contains(DefaultKinds, kind) || slices.Contains(extra, kind) && slices.Contains(DataKinds, kind)
}

// IsValue reports whether s is a sops-encrypted value.
func IsValue(s string) bool { return strings.HasPrefix(s, "ENC[AES256_GCM,") }

// Paths returns the JSON pointers of obj's encrypted values and of
// its sops section, sorted: the paths an override must not write.
func Paths(obj map[string]any) []string {
	out := []string{"/" + MetadataKey}
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if ptr == "" && k == MetadataKey {
					continue
				}
				walk(c, ptr+"/"+escape(k))
			}
		case []any:
			for i, c := range v {
				walk(c, ptr+"/"+strconv.Itoa(i))
			}
		case string:
			if IsValue(v) {
				out = append(out, ptr)
			}
		}
	}
	walk(obj, "")
	slices.Sort(out)
	return out
}

// Touches reports whether writing the JSON pointer p changes a sealed
// path (p equals it, is inside it or contains it) or the original document.
func Touches(p string, sealed []string) (string, bool) {
	if p == "/metadata/annotations/"+escape(workv1alpha1.AnnotationSOPSDocument) {
		return p, true
	}
	for _, s := range sealed {
		if p == s || strings.HasPrefix(s, p+"/") || strings.HasPrefix(p, s+"/") || p == "" || p == "/" {
			return s, true
		}
	}
	return "", false
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Recipients returns the age recipients in obj's sops section, sorted.
func Recipients(obj map[string]any) []string {
	m, _ := obj[MetadataKey].(map[string]any)
	var out []string
	add := func(list any) {
		l, _ := list.([]any)
		for _, e := range l {
			if em, ok := e.(map[string]any); ok {
				if r, ok := em["recipient"].(string); ok {
					out = append(out, r)
				}
			}
		}
	}
	add(m["age"])
	groups, _ := m["key_groups"].([]any)
	for _, g := range groups {
		if gm, ok := g.(map[string]any); ok {
			add(gm["age"])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ChangedKeys compares two versions of an encrypted object without
// decrypting: it returns the names of the values whose ciphertext was
// added, removed or changed (the last element of each path), sorted, and
// whether the MAC changed. Re-encrypting a value with the same plaintext
// also changes its ciphertext: sops draws a new IV.
func ChangedKeys(before, after map[string]any) (keys []string, macChanged bool) {
	b, a := sealedValues(before), sealedValues(after)
	for p, v := range a {
		if b[p] != v {
			keys = append(keys, lastElem(p))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			keys = append(keys, lastElem(p))
		}
	}
	slices.Sort(keys)
	mb, _, _ := unstructured.NestedString(before, MetadataKey, "mac")
	ma, _, _ := unstructured.NestedString(after, MetadataKey, "mac")
	return slices.Compact(keys), mb != ma
}

func sealedValues(obj map[string]any) map[string]string {
	out := map[string]string{}
	for _, p := range Paths(obj) {
		if p == "/"+MetadataKey {
			continue
		}
		out[p] = valueAt(obj, p)
	}
	return out
}

func valueAt(obj map[string]any, ptr string) string {
	var cur any = obj
	for _, el := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		el = strings.ReplaceAll(strings.ReplaceAll(el, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[el]
		case []any:
			i, err := strconv.Atoi(el)
			if err != nil || i < 0 || i >= len(c) {
				return ""
			}
			cur = c[i]
		default:
			return ""
		}
	}
	s, _ := cur.(string)
	return s
}

func lastElem(p string) string {
	el := p[strings.LastIndex(p, "/")+1:]
	return strings.ReplaceAll(strings.ReplaceAll(el, "~1", "/"), "~0", "~")
}

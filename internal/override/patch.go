package override

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrMissingPath matches, with errors.Is, every error caused by a path that
// does not exist in the object: a patch's path, its parent or an array index
// out of range, an image predicate path, or a fieldOverrider fieldPath.
var ErrMissingPath = errors.New("path does not exist")

// missingPath keeps a json-patch error's message and makes it match both the
// library's sentinel and ErrMissingPath.
type missingPath struct{ err error }

func (e missingPath) Error() string   { return e.err.Error() }
func (e missingPath) Unwrap() []error { return []error{e.err, ErrMissingPath} }

// operation is one RFC 6902 operation. Value is always sent, as Karmada
// sends it: a missing value is JSON null.
type operation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// rawValue returns the JSON of an API value, or null when it is absent.
func rawValue(v *apiextensionsv1.JSON) json.RawMessage {
	if v == nil || len(v.Raw) == 0 {
		return json.RawMessage("null")
	}
	return v.Raw
}

// encode returns the JSON of a value built by this package (strings, string
// slices), which always encodes.
func encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("override: cannot encode %T: %v", v, err))
	}
	return b
}

// patchJSON applies ops, in order, to doc with json-patch v5 default options
// (add needs the parent, replace and remove need the path, negative array
// indices allowed).
func patchJSON(doc []byte, ops []operation) ([]byte, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to encode patch: %w", err)
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to decode patch: %w", err)
	}
	out, err := patch.Apply(doc)
	if errors.Is(err, jsonpatch.ErrMissing) || errors.Is(err, jsonpatch.ErrInvalidIndex) {
		err = missingPath{err}
	}
	if err != nil {
		return nil, fmt.Errorf("failed to apply patch: %w", err)
	}
	return out, nil
}

// patchObject applies one operation to obj the way Karmada does: encode the
// object, patch the JSON, decode it back. The common edits — a string set,
// replaced or removed on an object member that json-patch would accept —
// are made in place, with the same result and no round trip (the round
// trip dominated render time).
func patchObject(obj *unstructured.Unstructured, op operation) error {
	if fastPatch(obj.Object, op) {
		return nil
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("failed to encode object: %w", err)
	}
	out, err := patchJSON(doc, []operation{op})
	if err != nil {
		return err
	}
	if err := obj.UnmarshalJSON(out); err != nil {
		return fmt.Errorf("failed to decode patched object: %w", err)
	}
	return nil
}

var (
	tokenEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	tokenUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// escapeToken escapes one JSON pointer reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return tokenEscaper.Replace(s)
}

// fastPatch makes op in place when it is an add, replace or remove of a
// string on a member of an existing object, with exactly json-patch's
// outcome: add sets (creating or overwriting), replace and remove need the
// member. It reports false, changing nothing, for anything else.
func fastPatch(doc map[string]any, op operation) bool {
	tokens, err := splitPointer(op.Path)
	if err != nil || len(tokens) == 0 {
		return false
	}
	parent, ok := lookup(doc, "/"+joinTokens(tokens[:len(tokens)-1]))
	if len(tokens) == 1 {
		parent, ok = doc, true
	}
	m, isMap := parent.(map[string]any)
	if !ok || !isMap {
		return false
	}
	key := tokens[len(tokens)-1]
	_, exists := m[key]
	switch op.Op {
	case "remove":
		if !exists {
			return false
		}
		delete(m, key)
		return true
	case "add", "replace":
		var v string
		isString := len(op.Value) > 0 && op.Value[0] == '"'
		if op.Op == "replace" && !exists || !isString || json.Unmarshal(op.Value, &v) != nil {
			return false
		}
		m[key] = v
		return true
	}
	return false
}

func joinTokens(tokens []string) string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = escapeToken(t)
	}
	return strings.Join(out, "/")
}

// splitPointer returns the unescaped tokens of a JSON pointer; "" is the
// whole document.
func splitPointer(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("invalid JSON pointer %q: must start with /", pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		if strings.IndexByte(t, '~') >= 0 {
			tokens[i] = tokenUnescaper.Replace(t)
		}
	}
	return tokens, nil
}

// lookup returns the value at pointer in doc, reading array indices the way
// json-patch does (negative indices count from the end).
func lookup(doc any, pointer string) (any, bool) {
	tokens, err := splitPointer(pointer)
	if err != nil {
		return nil, false
	}
	cur := doc
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := arrayIndex(t, len(c))
			if !ok || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// arrayIndex reads token as an index into an array of length n; negative
// indices count from the end. The result may equal n.
func arrayIndex(token string, n int) (int, bool) {
	i, err := strconv.Atoi(token)
	if err != nil {
		return 0, false
	}
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i <= n
}

// readString returns the string at pointer in obj.
func readString(obj map[string]any, pointer string) (string, error) {
	if _, err := splitPointer(pointer); err != nil {
		return "", err
	}
	v, ok := lookup(obj, pointer)
	if !ok {
		return "", fmt.Errorf("failed to read %q: %w", pointer, ErrMissingPath)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("failed to read %q: value is a %s, not a string", pointer, kindOf(v))
	}
	return s, nil
}

// kindOf names the JSON type of an unstructured value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}

// compact renders an unstructured value as compact JSON without HTML
// escaping.
func compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

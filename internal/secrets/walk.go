package secrets

import (
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/propagit/propagit/internal/secrets/sealed"
)

// walker decrypts a document's values in sops' tree order (document order,
// the sops section left out, comments skipped: sops keeps them out of the
// MAC) and hashes each for the MAC.
type walker struct {
	rule    rule
	key     []byte
	json    bool
	macOnly bool
	mac     hash.Hash
	paths   [][]string
}

// mapping decodes a mapping at path; the top one (path nil) without its
// sops key. It reports whether it held an encrypted value; inList keeps
// the paths inside a list out of w.paths.
func (w *walker) mapping(n *yaml.Node, path []string, inList bool) (map[string]any, bool, error) {
	out := make(map[string]any, len(n.Content)/2)
	held := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var name any
		if k.Kind != yaml.ScalarNode || k.Decode(&name) != nil {
			return nil, false, malformed("a key that is not a string at line %d", k.Line)
		}
		s, ok := name.(string)
		switch {
		case !ok:
			return nil, false, malformed("a key that is not a string at line %d", k.Line)
		case path == nil && s == sealed.MetadataKey:
			continue
		}
		if _, dup := out[s]; dup {
			return nil, false, malformed("key %s repeated at line %d", dotted(append(path, s)), k.Line)
		}
		p := append(path[:len(path):len(path)], s)
		val, enc, err := w.value(v, p, inList)
		if err != nil {
			return nil, false, err
		}
		if _, c := val.(comment); c {
			continue
		}
		out[s] = val
		held = held || enc
		if enc && !inList && v.Kind != yaml.MappingNode {
			w.paths = append(w.paths, p)
		}
	}
	return out, held, nil
}

// value decodes n at path, reporting whether it is or holds an encrypted
// value.
func (w *walker) value(n *yaml.Node, path []string, inList bool) (any, bool, error) {
	switch n.Kind {
	case yaml.MappingNode:
		return w.mapping(n, path, inList)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		held := false
		for _, c := range n.Content {
			v, enc, err := w.value(c, path, true)
			if err != nil {
				return nil, false, err
			}
			if _, ok := v.(comment); !ok {
				out = append(out, v)
			}
			held = held || enc
		}
		return out, held, nil
	case yaml.ScalarNode:
		return w.scalar(n, path)
	}
	return nil, false, malformed("unexpected YAML node at line %d", n.Line)
}

// scalar decodes, decrypts if the rule says so, and hashes one value; a
// null is neither, as in sops.
func (w *walker) scalar(n *yaml.Node, path []string) (any, bool, error) {
	v, err := w.plain(n)
	if err != nil || v == nil {
		return nil, false, err
	}
	enc := w.rule.encrypted(path)
	if enc {
		s, ok := v.(string)
		if !ok {
			return nil, false, malformed("value at %s (line %d) should be encrypted and is a plain %s", dotted(path), n.Line, strings.TrimPrefix(n.ShortTag(), "!!"))
		}
		if v, err = openValue(s, w.key, strings.Join(path, ":")+":"); err != nil {
			return nil, false, wrapAt(path, n.Line, err)
		}
	}
	if _, c := v.(comment); c {
		return v, false, nil
	}
	if enc || !w.macOnly {
		w.mac.Write(macBytes(v))
	}
	if t, ok := v.(time.Time); ok {
		v = t.Format(time.RFC3339Nano)
	}
	return v, enc, nil
}

// plain decodes a scalar as sops' stores do: YAML by its tag, JSON
// numbers as an int when they fit 64 bits and a float otherwise.
func (w *walker) plain(n *yaml.Node) (any, error) {
	tag := n.ShortTag()
	if w.json && (tag == "!!int" || tag == "!!float") {
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, malformed("a number out of range at line %d", n.Line)
		}
		return f, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, malformed("a value that does not decode at line %d", n.Line)
	}
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case nil, string, bool, float64, time.Time:
		return v, nil
	}
	return nil, malformed("a %s value sops does not read at line %d", strings.TrimPrefix(tag, "!!"), n.Line)
}

// wrapAt names the path and line of a value's error.
func wrapAt(path []string, line int, err error) error {
	return fmt.Errorf("value at %s (line %d): %w", dotted(path), line, err)
}

func dotted(path []string) string { return strings.Join(path, ".") }

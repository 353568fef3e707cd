package works

import (
	"fmt"
	"sync"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// YAMLEncoder turns objects into the bytes of their files in a cluster's
// folder, the bytes the work branch and `propagit render --out` both hold
// (see EncodeManifest and internal/works/folder), each distinct object
// once: render shares an object between the clusters that receive it
// unchanged, so identical objects get identical bytes. Objects must not
// change once encoded. Safe for concurrent use.
type YAMLEncoder struct {
	json *workv1alpha1.Encoder
	mu   sync.Mutex
	yaml map[*unstructured.Unstructured][]byte
}

// NewYAMLEncoder returns an empty YAMLEncoder.
func NewYAMLEncoder() *YAMLEncoder {
	return &YAMLEncoder{json: workv1alpha1.NewEncoder(), yaml: map[*unstructured.Unstructured][]byte{}}
}

// Encode returns the YAML of obj, shared with every caller that encodes
// the same object: callers must not modify it.
func (e *YAMLEncoder) Encode(obj *unstructured.Unstructured) ([]byte, error) {
	e.mu.Lock()
	b, ok := e.yaml[obj]
	e.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := toYAML(obj.Object, func() ([]byte, error) { return e.json.Encode(obj) })
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", workv1alpha1.KeyOf(obj), err)
	}
	e.mu.Lock()
	e.yaml[obj] = b
	e.mu.Unlock()
	return b, nil
}

// toYAML is yaml.JSONToYAML of v's JSON (raw, computed only when needed):
// the bytes yaml.Marshal gives, YAML with sorted keys. Values made only of
// strings, integers, booleans, nulls, maps and lists (almost every
// manifest) are marshalled directly, which gives the same bytes without
// parsing JSON back; any other value (a float, whose JSON may come back as
// an integer) goes through JSON.
func toYAML(v map[string]any, raw func() ([]byte, error)) ([]byte, error) {
	if v != nil && plainJSON(v) {
		return yamlv2.Marshal(v)
	}
	j, err := raw()
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// plainJSON reports whether v holds only values whose YAML is the same
// marshalled directly or through JSON.
func plainJSON(v any) bool {
	switch v := v.(type) {
	case string:
		return utf8.ValidString(v) // JSON replaces invalid bytes
	case bool, nil, int64, int32, int:
		return true
	case map[string]any:
		if v == nil {
			return false // null in JSON, {} in YAML
		}
		for _, x := range v {
			if !plainJSON(x) {
				return false
			}
		}
		return true
	case []any:
		if v == nil {
			return false
		}
		for _, x := range v {
			if !plainJSON(x) {
				return false
			}
		}
		return true
	}
	return false
}

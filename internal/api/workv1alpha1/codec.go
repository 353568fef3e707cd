package workv1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The Work codec: how rendered objects become a Work's manifests and back,
// and the digest that names a Work's content. The controller encodes, the
// pull agent and the controller (after a restart) decode, and both compare
// digests, so they share one implementation.

// EncodeManifests returns objs as Work manifests (JSON, in order).
func EncodeManifests(objs []*unstructured.Unstructured) ([]runtime.RawExtension, error) {
	return (*Encoder)(nil).EncodeManifests(objs)
}

// Encoder encodes rendered objects, each distinct object once: an object
// that render shares between clusters is encoded the first time and its
// bytes reused by every Work that holds it, by their digests and by the
// files render writes. Objects must not change once encoded (rendered
// objects never do). An Encoder is safe for concurrent use; the nil
// Encoder encodes every time and remembers nothing.
type Encoder struct {
	mu  sync.Mutex
	raw map[*unstructured.Unstructured][]byte
	// prev is what the encoder held before Next: objects a memo shares
	// from one render to the next are not encoded again.
	prev map[*unstructured.Unstructured][]byte
}

// NewEncoder returns an empty Encoder.
func NewEncoder() *Encoder {
	return &Encoder{raw: map[*unstructured.Unstructured][]byte{}}
}

// Next starts another render: what the last one encoded is still known
// until Settle.
func (e *Encoder) Next() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prev, e.raw = e.raw, make(map[*unstructured.Unstructured][]byte, len(e.raw))
}

// Settle ends a render: objects it did not encode are forgotten, so an
// encoder kept between renders holds only what the last one used.
func (e *Encoder) Settle() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prev = nil
}

// Encode returns the JSON of o, shared with every caller that encodes the
// same object: callers must not modify it.
func (e *Encoder) Encode(o *unstructured.Unstructured) ([]byte, error) {
	if e != nil {
		e.mu.Lock()
		raw, ok := e.raw[o]
		if !ok {
			if raw, ok = e.prev[o]; ok {
				e.raw[o] = raw
			}
		}
		e.mu.Unlock()
		if ok {
			return raw, nil
		}
	}
	raw, err := json.Marshal(o.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", KeyOf(o), err)
	}
	if e != nil {
		e.mu.Lock()
		e.raw[o] = raw
		e.mu.Unlock()
	}
	return raw, nil
}

// EncodeManifests returns objs as Work manifests (JSON, in order).
func (e *Encoder) EncodeManifests(objs []*unstructured.Unstructured) ([]runtime.RawExtension, error) {
	out := make([]runtime.RawExtension, 0, len(objs))
	for _, o := range objs {
		raw, err := e.Encode(o)
		if err != nil {
			return nil, err
		}
		out = append(out, runtime.RawExtension{Raw: raw})
	}
	return out, nil
}

// Objects decodes the manifests of w.
func Objects(w *Work) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(w.Spec.Manifests))
	for i := range w.Spec.Manifests {
		obj, err := DecodeManifest(&w.Spec.Manifests[i])
		if err != nil {
			return nil, fmt.Errorf("work %s: manifest %d: %w", w.Spec.Cluster, i, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// DecodeManifest decodes one manifest, raw or as an object.
func DecodeManifest(m *runtime.RawExtension) (*unstructured.Unstructured, error) {
	raw := m.Raw
	if raw == nil && m.Object != nil {
		var err error
		if raw, err = json.Marshal(m.Object); err != nil {
			return nil, err
		}
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return obj, nil
}

// Digest identifies the content of a Work: its manifests' bytes.
func Digest(w *Work) string {
	h := sha256.New()
	for _, m := range w.Spec.Manifests {
		h.Write(m.Raw)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ShortRevision shortens a Git revision to 7 characters, as Git hosts show
// it, for messages and tables; records keep the full revision.
func ShortRevision(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}

package gitstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// A Git status record (StatusFile) is JSON, which YAML readers also read:
// older records are YAML and still read, and a reader built before the
// change reads the new ones. JSON is encoded directly, where YAML went
// through JSON first and then re-encoded every entry; and statusEncoder
// encodes only the entries that changed since the last record.

// statusEncoder encodes one cluster's status records, keeping the encoding
// of each inventory and object entry of the last record it encoded: a sync
// that changed one object encodes one entry, not the member's thousands.
type statusEncoder struct {
	refs    entryCache[workv1alpha1.ObjectRef]
	objects entryCache[workv1alpha1.ObjectResult]
}

// encode returns st (normalized: lists sorted) as JSON, and how many
// entries it encoded anew.
func (e *statusEncoder) encode(st *workv1alpha1.WorkStatus) ([]byte, int, error) {
	head := *st
	head.Inventory, head.Objects = nil, nil
	data, err := json.Marshal(&head)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to encode status: %w", err)
	}
	refs, n, err := e.refs.encode(st.Inventory, func(r workv1alpha1.ObjectRef) workv1alpha1.ObjectRef { return r }, sameRef)
	if err != nil {
		return nil, 0, err
	}
	objs, m, err := e.objects.encode(st.Objects, func(o workv1alpha1.ObjectResult) workv1alpha1.ObjectRef { return o.ObjectRef }, works.SameResult)
	if err != nil {
		return nil, 0, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + size(refs) + size(objs) + 32)
	b.Write(data[:len(data)-1]) // without its closing brace
	sep := len(data) > 2
	for _, l := range []struct {
		name    string
		entries [][]byte
	}{{"inventory", refs}, {"objects", objs}} {
		if len(l.entries) == 0 {
			continue
		}
		if sep {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:[", l.name)
		b.Write(bytes.Join(l.entries, []byte{','}))
		b.WriteByte(']')
		sep = true
	}
	b.WriteByte('}')
	return b.Bytes(), n + m, nil
}

func size(entries [][]byte) int {
	n := len(entries)
	for _, e := range entries {
		n += len(e)
	}
	return n
}

func sameRef(a, b workv1alpha1.ObjectRef) bool { return a == b }

// entryCache keeps a sorted list of entries and the JSON of each.
type entryCache[T any] struct {
	items []T
	data  [][]byte
}

// encode returns the JSON of each of items, sorted as the cached ones are
// (by key, works.RefLess), reusing the cached JSON of an entry that is the same,
// and how many it encoded; items and their JSON are then the cache.
func (c *entryCache[T]) encode(items []T, key func(T) workv1alpha1.ObjectRef, same func(a, b T) bool) ([][]byte, int, error) {
	out := make([][]byte, len(items))
	encoded, j := 0, 0
	for i, it := range items {
		k := key(it)
		for j < len(c.items) && works.RefLess(key(c.items[j]), k) {
			j++
		}
		if j < len(c.items) && same(c.items[j], it) {
			out[i] = c.data[j]
			j++
			continue
		}
		data, err := json.Marshal(it)
		if err != nil {
			return nil, 0, fmt.Errorf("failed to encode the status of %s: %w", k.ObjectKey, err)
		}
		out[i] = data
		encoded++
	}
	c.items, c.data = items, out
	return out, encoded, nil
}

// decodeStatus reads a status record: JSON, or YAML as records were
// written before.
func decodeStatus(data []byte) (*workv1alpha1.WorkStatus, error) {
	st := &workv1alpha1.WorkStatus{}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		if err := json.Unmarshal(trimmed, st); err != nil {
			return nil, err
		}
		return st, nil
	}
	if err := yaml.Unmarshal(data, st); err != nil {
		return nil, err
	}
	return st, nil
}

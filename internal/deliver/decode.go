package deliver

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// decodeMemo keeps the reference of every manifest the last apply decoded,
// by its bytes, so that a Work that changes one object of thousands
// decodes that one: decoding every manifest again on each apply cost more
// than the apply itself. It keeps only what the last decode used, so it
// does not grow.
type decodeMemo struct {
	raws [][]byte
	refs []workv1alpha1.ObjectRef
}

// decode returns the objects of w to apply and the reference of each of
// its manifests, in order. With prev, the Work known to be on the member,
// the objects are only those whose manifest is not byte-identical in prev
// (the others are on the member already); without, all of them.
func (m *decodeMemo) decode(w, prev *workv1alpha1.Work) ([]*unstructured.Unstructured, []workv1alpha1.ObjectRef, error) {
	var before manifestIndex
	if prev != nil {
		before.raws = make([][]byte, len(prev.Spec.Manifests))
		for i, mf := range prev.Spec.Manifests {
			before.raws[i] = mf.Raw
		}
	}
	before.aligned = prev != nil && len(before.raws) == len(w.Spec.Manifests)
	memo := manifestIndex{raws: m.raws, aligned: len(m.raws) == len(w.Spec.Manifests)}
	raws := make([][]byte, len(w.Spec.Manifests))
	refs := make([]workv1alpha1.ObjectRef, 0, len(w.Spec.Manifests))
	var objs []*unstructured.Unstructured
	for i := range w.Spec.Manifests {
		mf := &w.Spec.Manifests[i]
		raws[i] = mf.Raw
		unchanged := mf.Raw != nil && prev != nil && before.find(i, mf.Raw) >= 0
		if unchanged {
			if j := memo.find(i, mf.Raw); j >= 0 {
				refs = append(refs, m.refs[j])
				continue
			}
		}
		obj, err := workv1alpha1.DecodeManifest(mf)
		if err != nil {
			return nil, nil, fmt.Errorf("work %s: manifest %d: %w", w.Spec.Cluster, i, err)
		}
		refs = append(refs, workv1alpha1.RefOf(obj))
		if !unchanged {
			objs = append(objs, obj)
		}
	}
	m.raws, m.refs = raws, refs
	return objs, refs, nil
}

// manifestIndex finds a manifest's bytes in a list of manifests. A Work
// that changed objects in place keeps every manifest at its position, and
// unchanged manifests usually share their bytes with the Work before, so
// the position is tried first, at the cost of a pointer comparison; only
// a Work whose manifests moved (one added or removed) pays for hashing
// them into a map, once.
//
// While the list is as long as the Work searched (aligned), the first few
// misses are taken as manifests changed in place and answered -1 without
// the map: a commit that changes one object then hashes no manifest. A
// manifest that in fact moved is then decoded and applied again, which
// changes nothing on the member.
type manifestIndex struct {
	raws    [][]byte
	byRaw   map[string]int
	aligned bool
	misses  int
}

// inPlaceMisses is how many misses an aligned list takes as changes in
// place before it builds its map.
const inPlaceMisses = 16

// find returns the position of raw in the list, -1 when absent (and for a
// nil raw, a manifest not held as bytes).
func (x *manifestIndex) find(i int, raw []byte) int {
	if raw == nil {
		return -1
	}
	if i < len(x.raws) && bytes.Equal(x.raws[i], raw) {
		return i
	}
	if x.misses++; x.aligned && x.misses <= inPlaceMisses {
		return -1
	}
	if x.byRaw == nil {
		x.byRaw = make(map[string]int, len(x.raws))
		for j, r := range x.raws {
			if _, seen := x.byRaw[string(r)]; r != nil && !seen {
				x.byRaw[string(r)] = j
			}
		}
	}
	if j, ok := x.byRaw[string(raw)]; ok {
		return j
	}
	return -1
}

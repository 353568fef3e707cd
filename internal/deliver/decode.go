package deliver

import (
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
	refs map[string]workv1alpha1.ObjectRef
}

// decode returns the objects of w to apply and the reference of each of
// its manifests, in order. With prev, the Work known to be on the member,
// the objects are only those whose manifest is not byte-identical in prev
// (the others are on the member already); without, all of them.
func (m *decodeMemo) decode(w, prev *workv1alpha1.Work) ([]*unstructured.Unstructured, []workv1alpha1.ObjectRef, error) {
	var before map[string]bool
	if prev != nil {
		before = make(map[string]bool, len(prev.Spec.Manifests))
		for _, mf := range prev.Spec.Manifests {
			if mf.Raw != nil {
				before[string(mf.Raw)] = true
			}
		}
	}
	next := make(map[string]workv1alpha1.ObjectRef, len(w.Spec.Manifests))
	refs := make([]workv1alpha1.ObjectRef, 0, len(w.Spec.Manifests))
	var objs []*unstructured.Unstructured
	for i := range w.Spec.Manifests {
		mf := &w.Spec.Manifests[i]
		unchanged := mf.Raw != nil && before[string(mf.Raw)]
		if r, ok := m.refs[string(mf.Raw)]; ok && unchanged {
			next[string(mf.Raw)] = r
			refs = append(refs, r)
			continue
		}
		obj, err := workv1alpha1.DecodeManifest(mf)
		if err != nil {
			return nil, nil, fmt.Errorf("work %s: manifest %d: %w", w.Spec.Cluster, i, err)
		}
		r := workv1alpha1.RefOf(obj)
		if mf.Raw != nil {
			next[string(mf.Raw)] = r
		}
		refs = append(refs, r)
		if !unchanged {
			objs = append(objs, obj)
		}
	}
	m.refs = next
	return objs, refs, nil
}

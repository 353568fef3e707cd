package incremental

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/render"
)

// groupAll is render.Group through the memo: bindings are those of keys.
// What each binding sends is worked out once and kept with it (a settled
// binding brings it along), and when the last grouping was of the same
// templates on the same clusters, only the bindings that send something
// else are looked at.
func (m *Memo) groupAll(st *runState, bindings []*render.Binding, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster) []render.Work {
	gm := &m.group
	if !st.sendInOrder(bindings, gm.ordered(keys), clusters) {
		*gm = groupMemo{}
		return render.GroupRanked(bindings)
	}
	var objects [][]*unstructured.Unstructured
	if gm.matches(keys, clusters) {
		objects = gm.update(st.sent)
	} else {
		objects = render.GroupSent(st.sent, len(clusters))
		gm.build(st.sent, keys, clusters, objects)
	}
	return render.WorksOf(objects, clusters)
}

// sendInOrder works out what each binding sends, and reports whether, as
// usual, the bindings have distinct keys in ascending order (known when
// ordered), every object has its binding's key and goes to a declared
// cluster. Every binding is looked at even when one is not: settle keeps
// sameKey.
func (st *runState) sendInOrder(bindings []*render.Binding, ordered bool, clusters []*clusterv1alpha1.Cluster) bool {
	inOrder := ordered || render.InOrder(bindings)
	seen := map[*unstructured.Unstructured]bool{} // reused per binding: objects are shared between its clusters
	for i, b := range bindings {
		if st.isShared(i, b) {
			if st.sent[i] == nil { // not brought by a placed binding (placememo.go)
				st.sameKey[i], st.sent[i] = st.shared[i].settled.sameKey, st.shared[i].settled.sent
			}
		} else {
			st.sameKey[i], st.sent[i] = render.SameKey(b, seen), nil
		}
		inOrder = inOrder && st.sameKey[i]
	}
	if !inOrder {
		return false
	}
	for i, b := range bindings {
		if st.sent[i] == nil {
			s, ok := render.SentOf(b, clusters)
			if !ok {
				return false
			}
			st.sent[i] = s
		}
	}
	return true
}

// groupMemo is the last grouping in order: the bindings' keys (the very
// slice, as byPosition), the clusters, what each binding sent and, per
// cluster, its objects with the position of the binding of each. When the
// next Render has the same templates in the same order on the same
// clusters, each cluster's objects are the last ones with those of the
// bindings that send something else (a settled binding sends the very
// same Sent) put in their place: a copy, not a walk over every binding.
// The zero groupMemo has nothing.
type groupMemo struct {
	keys     []workv1alpha1.ObjectKey
	clusters []string
	sent     []*render.Sent
	objects  [][]*unstructured.Unstructured
	from     [][]int32
}

// matches reports whether gm's last grouping was of keys on clusters.
func (gm *groupMemo) matches(keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster) bool {
	if !gm.ordered(keys) || len(clusters) != len(gm.clusters) {
		return false
	}
	for i, c := range clusters {
		if c.Name != gm.clusters[i] {
			return false
		}
	}
	return true
}

// ordered reports whether keys are the very keys gm grouped in order last
// (so distinct and ascending).
func (gm *groupMemo) ordered(keys []workv1alpha1.ObjectKey) bool {
	return gm.objects != nil && len(keys) == len(gm.keys) && len(keys) > 0 && &keys[0] == &gm.keys[0]
}

// build keeps objects, the grouping of sent afresh, for the next Render.
func (gm *groupMemo) build(sent []*render.Sent, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster, objects [][]*unstructured.Unstructured) {
	from := make([][]int32, len(clusters))
	for ci, objs := range objects {
		from[ci] = make([]int32, 0, len(objs))
	}
	for i, s := range sent {
		for _, ci := range s.Clusters {
			from[ci] = append(from[ci], int32(i))
		}
	}
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Name
	}
	gm.keep(sent, keys, names, objects, from)
}

// update groups sent, one per binding, from the last grouping, of the same
// keys on the same clusters: only bindings that send something else are
// looked at.
func (gm *groupMemo) update(sent []*render.Sent) [][]*unstructured.Unstructured {
	var changed []int32
	for i, s := range sent {
		if s != gm.sent[i] {
			changed = append(changed, int32(i))
		}
	}
	if len(changed) == 0 {
		gm.keep(sent, gm.keys, gm.clusters, gm.objects, gm.from)
		return gm.objects
	}
	// sends[j][ci] is what the j-th changed binding sends cluster ci.
	sends := make([][]*unstructured.Unstructured, len(changed))
	for j, i := range changed {
		sends[j] = make([]*unstructured.Unstructured, len(gm.clusters))
		s := sent[i]
		for k, ci := range s.Clusters {
			sends[j][ci] = s.Objects[k]
		}
	}
	// Where every changed binding sends to the clusters it sent to before
	// (new content: the usual commit), each new object takes the place of
	// the old one and the positions stay.
	samePlaces := true
	for _, i := range changed {
		if old := gm.sent[i]; old == nil || !slices.Equal(old.Clusters, sent[i].Clusters) {
			samePlaces = false
			break
		}
	}
	objects, from := make([][]*unstructured.Unstructured, len(gm.clusters)), make([][]int32, len(gm.clusters))
	parallel.For(len(gm.clusters), func() func(int) {
		return func(ci int) {
			if samePlaces {
				objects[ci], from[ci] = gm.replaced(ci, changed, sends), gm.from[ci]
			} else {
				objects[ci], from[ci] = gm.merged(ci, changed, sends)
			}
		}
	})
	gm.keep(sent, gm.keys, gm.clusters, objects, from)
	return objects
}

// replaced returns the objects of cluster ci with those the changed
// bindings send it now in place of those they sent before (each sends the
// same clusters as before); the last list itself when none sends it any.
func (gm *groupMemo) replaced(ci int, changed []int32, sends [][]*unstructured.Unstructured) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for j, i := range changed {
		obj := sends[j][ci]
		if obj == nil {
			continue
		}
		if objs == nil {
			objs = slices.Clone(gm.objects[ci])
		}
		k, _ := slices.BinarySearch(gm.from[ci], i)
		objs[k] = obj
	}
	if objs == nil {
		return gm.objects[ci]
	}
	return objs
}

// merged returns the objects of cluster ci, and the binding of each, with
// what the changed bindings sent it before taken out and what they send it
// now put in.
func (gm *groupMemo) merged(ci int, changed []int32, sends [][]*unstructured.Unstructured) ([]*unstructured.Unstructured, []int32) {
	oldObjs, oldFrom := gm.objects[ci], gm.from[ci]
	objs, fr := make([]*unstructured.Unstructured, 0, len(oldObjs)+len(changed)), make([]int32, 0, len(oldFrom)+len(changed))
	pos := 0
	for j, i := range changed {
		n, _ := slices.BinarySearch(oldFrom[pos:], i)
		end := pos + n
		objs, fr = append(objs, oldObjs[pos:end]...), append(fr, oldFrom[pos:end]...)
		pos = end
		if pos < len(oldFrom) && oldFrom[pos] == i {
			pos++ // what it sent before
		}
		if obj := sends[j][ci]; obj != nil {
			objs, fr = append(objs, obj), append(fr, i)
		}
	}
	return append(objs, oldObjs[pos:]...), append(fr, oldFrom[pos:]...)
}

// keep records a grouping for the next Render; sent is the Render's
// record, copied.
func (gm *groupMemo) keep(sent []*render.Sent, keys []workv1alpha1.ObjectKey, clusters []string, objects [][]*unstructured.Unstructured, from [][]int32) {
	*gm = groupMemo{keys: keys, clusters: clusters, sent: slices.Clone(sent), objects: objects, from: from}
}

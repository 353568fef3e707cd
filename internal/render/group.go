package render

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// group collects rendered objects per cluster, each cluster's sorted by
// key (ties in binding order); bindings are those of keys. gm, when not
// nil, is the memo's last grouping, updated.
func group(bindings []*Binding, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster, gm *groupMemo) []Work {
	if works, ok := groupInOrder(bindings, keys, clusters, gm); ok {
		return works
	}
	gm.forget()
	return groupRanked(bindings)
}

// groupInOrder is group when, as usual, bindings have distinct keys in
// ascending order, every object has its binding's key and goes to a
// declared cluster: each cluster's objects then come in binding order,
// sorted already, with no key compared and no map consulted. What each
// binding sends is worked out once and kept with it (a settled binding
// brings it along).
func groupInOrder(bindings []*Binding, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster, gm *groupMemo) ([]Work, bool) {
	inOrder := true
	ordered := gm.ordered(keys)                   // else compared below
	seen := map[*unstructured.Unstructured]bool{} // reused per binding: objects are shared between its clusters
	for i, b := range bindings {
		if !ordered && i > 0 && bindings[i-1].Key.Compare(b.Key) >= 0 {
			inOrder = false
		}
		if !keepsKey(b, seen) {
			inOrder = false // every binding is still looked at: settle keeps sameKey
		}
	}
	if !inOrder {
		return nil, false
	}
	for _, b := range bindings {
		if b.sent == nil && !b.send(clusters) {
			return nil, false
		}
	}
	var objects [][]*unstructured.Unstructured
	if gm.matches(keys, clusters) {
		objects = gm.update(bindings)
	} else {
		objects = gm.build(bindings, keys, clusters)
	}
	works := make([]Work, 0, len(clusters))
	for ci, objs := range objects {
		if len(objs) > 0 {
			works = append(works, Work{Cluster: clusters[ci].Name, Objects: objs[:len(objs):len(objs)]})
		}
	}
	return works, true
}

// groupMemo is the last grouping in order: the bindings' keys (the very
// slice, as byPosition), the clusters, what each binding sent and, per
// cluster, its objects with the position of the binding of each. When the
// next Render has the same templates in the same order on the same
// clusters, each cluster's objects are the last ones with those of the
// bindings that send something else (a settled binding sends the very
// same sent) put in their place: a copy, not a walk over every binding.
// The zero groupMemo has nothing; a nil one keeps nothing.
type groupMemo struct {
	keys     []workv1alpha1.ObjectKey
	clusters []string
	sent     []*sent
	objects  [][]*unstructured.Unstructured
	from     [][]int32
}

// matches reports whether gm's last grouping was of keys on clusters.
func (gm *groupMemo) matches(keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster) bool {
	if gm == nil || gm.objects == nil || len(keys) != len(gm.keys) || len(keys) == 0 || &keys[0] != &gm.keys[0] ||
		len(clusters) != len(gm.clusters) {
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
	return gm != nil && gm.objects != nil && len(keys) == len(gm.keys) && len(keys) > 0 && &keys[0] == &gm.keys[0]
}

func (gm *groupMemo) forget() {
	if gm != nil {
		*gm = groupMemo{}
	}
}

// build groups bindings, the bindings of keys, afresh (and keeps them
// when gm is not nil).
func (gm *groupMemo) build(bindings []*Binding, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster) [][]*unstructured.Unstructured {
	counts := make([]int, len(clusters))
	for _, b := range bindings {
		for _, ci := range b.sent.clusters {
			counts[ci]++
		}
	}
	objects := make([][]*unstructured.Unstructured, len(clusters))
	for ci, n := range counts {
		objects[ci] = make([]*unstructured.Unstructured, 0, n)
	}
	for _, b := range bindings {
		for k, ci := range b.sent.clusters {
			objects[ci] = append(objects[ci], b.sent.objects[k])
		}
	}
	if gm == nil {
		return objects
	}
	from := make([][]int32, len(clusters))
	for ci, n := range counts {
		from[ci] = make([]int32, 0, n)
	}
	for i, b := range bindings {
		for _, ci := range b.sent.clusters {
			from[ci] = append(from[ci], int32(i))
		}
	}
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Name
	}
	gm.keep(bindings, keys, names, objects, from)
	return objects
}

// update groups bindings from the last grouping, of the same keys on the
// same clusters: only bindings that send something else are looked at.
func (gm *groupMemo) update(bindings []*Binding) [][]*unstructured.Unstructured {
	var changed []int32
	for i, b := range bindings {
		if b.sent != gm.sent[i] {
			changed = append(changed, int32(i))
		}
	}
	if len(changed) == 0 {
		gm.keep(bindings, gm.keys, gm.clusters, gm.objects, gm.from)
		return gm.objects
	}
	// sends[j][ci] is what the j-th changed binding sends cluster ci.
	sends := make([][]*unstructured.Unstructured, len(changed))
	for j, i := range changed {
		sends[j] = make([]*unstructured.Unstructured, len(gm.clusters))
		s := bindings[i].sent
		for k, ci := range s.clusters {
			sends[j][ci] = s.objects[k]
		}
	}
	// Where every changed binding sends to the clusters it sent to before
	// (new content: the usual commit), each new object takes the place of
	// the old one and the positions stay.
	samePlaces := true
	for _, i := range changed {
		if old := gm.sent[i]; old == nil || !slices.Equal(old.clusters, bindings[i].sent.clusters) {
			samePlaces = false
			break
		}
	}
	objects, from := make([][]*unstructured.Unstructured, len(gm.clusters)), make([][]int32, len(gm.clusters))
	parallel(len(gm.clusters), func() func(int) {
		return func(ci int) {
			if samePlaces {
				objects[ci], from[ci] = gm.replaced(ci, changed, sends), gm.from[ci]
			} else {
				objects[ci], from[ci] = gm.merged(ci, changed, sends)
			}
		}
	})
	gm.keep(bindings, gm.keys, gm.clusters, objects, from)
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

// keep records a grouping for the next Render.
func (gm *groupMemo) keep(bindings []*Binding, keys []workv1alpha1.ObjectKey, clusters []string, objects [][]*unstructured.Unstructured, from [][]int32) {
	sent := make([]*sent, len(bindings))
	for i, b := range bindings {
		sent[i] = b.sent
	}
	*gm = groupMemo{keys: keys, clusters: clusters, sent: sent, objects: objects, from: from}
}

// sent is what a binding sends: each object with the index of its cluster
// in the Render's clusters.
type sent struct {
	clusters []int32
	objects  []*unstructured.Unstructured
}

// keepsKey sets and returns b.sameKey: whether every object b sends has
// b's key (a settled binding's answer is known).
func keepsKey(b *Binding, seen map[*unstructured.Unstructured]bool) bool {
	if b.shared != nil {
		if b.sent == nil { // not brought by a placed binding (placememo.go)
			b.sameKey, b.sent = b.shared.settled.sameKey, b.shared.settled.sent
		}
		return b.sameKey
	}
	clear(seen)
	b.sameKey = true
	for _, t := range b.Targets {
		if t.Object == nil || t.Suspended || seen[t.Object] {
			continue
		}
		seen[t.Object] = true
		if workv1alpha1.KeyOf(t.Object) != b.Key {
			b.sameKey = false
			return false
		}
	}
	return true
}

// send sets b.sent from its targets and the clusters (sorted by name);
// false when a target's cluster is not declared. Targets come sorted by
// cluster, so each index is found by walking along.
func (b *Binding) send(clusters []*clusterv1alpha1.Cluster) bool {
	s := &sent{clusters: make([]int32, 0, len(b.Targets)), objects: make([]*unstructured.Unstructured, 0, len(b.Targets))}
	j := 0
	for _, t := range b.Targets {
		if t.Object == nil || t.Suspended {
			continue
		}
		for j < len(clusters) && clusters[j].Name < t.Cluster {
			j++
		}
		k := j
		if j == len(clusters) || clusters[j].Name != t.Cluster {
			var found bool
			k, found = slices.BinarySearchFunc(clusters, t.Cluster, func(c *clusterv1alpha1.Cluster, name string) int { return strings.Compare(c.Name, name) })
			if !found {
				return false
			}
		}
		s.clusters, s.objects = append(s.clusters, int32(k)), append(s.objects, t.Object)
	}
	b.sent = s
	return true
}

// groupRanked is group in general: each distinct object has its key
// computed and ranked once, and clusters order their objects by rank.
func groupRanked(bindings []*Binding) []Work {
	type entry struct {
		rank int
		obj  *unstructured.Unstructured
	}
	var objects []rankedObject
	rank := map[*unstructured.Unstructured]int{} // reused per binding: objects are shared between its clusters
	per := map[string][]entry{}
	for bi, b := range bindings {
		clear(rank)
		for _, t := range b.Targets {
			if t.Object == nil || t.Suspended {
				continue
			}
			r, ok := rank[t.Object]
			if !ok {
				r = len(objects)
				objects = append(objects, rankedObject{key: workv1alpha1.KeyOf(t.Object), binding: bi})
				rank[t.Object] = r
			}
			per[t.Cluster] = append(per[t.Cluster], entry{rank: r, obj: t.Object})
		}
	}
	ranks := rankObjects(objects)
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	slices.Sort(names)
	works := make([]Work, 0, len(names))
	for _, n := range names {
		objs := per[n]
		for i := range objs {
			objs[i].rank = ranks[objs[i].rank]
		}
		if !slices.IsSortedFunc(objs, func(a, b entry) int { return cmp.Compare(a.rank, b.rank) }) {
			slices.SortStableFunc(objs, func(a, b entry) int { return cmp.Compare(a.rank, b.rank) })
		}
		w := Work{Cluster: n, Objects: make([]*unstructured.Unstructured, len(objs))}
		for i, o := range objs {
			w.Objects[i] = o.obj
		}
		works = append(works, w)
	}
	return works
}

// rankedObject is a distinct rendered object: its key and the index of its
// binding.
type rankedObject struct {
	key     workv1alpha1.ObjectKey
	binding int
}

// rankObjects returns each object's position in (key, binding) order.
func rankObjects(objects []rankedObject) []int {
	order := make([]int, len(objects))
	for i := range order {
		order[i] = i
	}
	less := func(a, b int) int {
		if c := objects[a].key.Compare(objects[b].key); c != 0 {
			return c
		}
		return cmp.Compare(objects[a].binding, objects[b].binding)
	}
	if !slices.IsSortedFunc(order, less) {
		slices.SortStableFunc(order, less)
	}
	ranks := make([]int, len(objects))
	for pos, i := range order {
		ranks[i] = pos
	}
	return ranks
}

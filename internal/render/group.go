package render

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Group collects rendered objects per cluster, each cluster's sorted by
// key (ties in binding order). As usual, bindings have distinct keys in
// ascending order, every object has its binding's key and goes to a
// declared cluster: each cluster's objects then come in binding order,
// sorted already, with no key compared and no map consulted.
func Group(bindings []*Binding, clusters []*clusterv1alpha1.Cluster) []Work {
	if !InOrder(bindings) {
		return GroupRanked(bindings)
	}
	seen := map[*unstructured.Unstructured]bool{} // reused per binding: objects are shared between its clusters
	sent := make([]*Sent, len(bindings))
	for i, b := range bindings {
		var ok bool
		if !SameKey(b, seen) {
			return GroupRanked(bindings)
		}
		if sent[i], ok = SentOf(b, clusters); !ok {
			return GroupRanked(bindings)
		}
	}
	return WorksOf(GroupSent(sent, len(clusters)), clusters)
}

// InOrder reports whether bindings have distinct keys in ascending order.
func InOrder(bindings []*Binding) bool {
	for i := 1; i < len(bindings); i++ {
		if bindings[i-1].Key.Compare(bindings[i].Key) >= 0 {
			return false
		}
	}
	return true
}

// GroupSent returns, per cluster index, the objects the bindings send it
// (sent, one per binding, in binding order).
func GroupSent(sent []*Sent, clusters int) [][]*unstructured.Unstructured {
	counts := make([]int, clusters)
	for _, s := range sent {
		for _, ci := range s.Clusters {
			counts[ci]++
		}
	}
	objects := make([][]*unstructured.Unstructured, clusters)
	for ci, n := range counts {
		objects[ci] = make([]*unstructured.Unstructured, 0, n)
	}
	for _, s := range sent {
		for k, ci := range s.Clusters {
			objects[ci] = append(objects[ci], s.Objects[k])
		}
	}
	return objects
}

// WorksOf returns the Works of the clusters that receive objects, by
// cluster index.
func WorksOf(objects [][]*unstructured.Unstructured, clusters []*clusterv1alpha1.Cluster) []Work {
	works := make([]Work, 0, len(clusters))
	for ci, objs := range objects {
		if len(objs) > 0 {
			works = append(works, Work{Cluster: clusters[ci].Name, Objects: objs[:len(objs):len(objs)]})
		}
	}
	return works
}

// Sent is what a binding sends: each object with the index of its
// cluster in the Render's clusters. It is read-only once made.
type Sent struct {
	Clusters []int32
	Objects  []*unstructured.Unstructured
}

// SameKey reports whether every object b sends has b's key; seen is
// scratch space, cleared first.
func SameKey(b *Binding, seen map[*unstructured.Unstructured]bool) bool {
	clear(seen)
	for _, t := range b.Targets {
		if t.Object == nil || t.Suspended || seen[t.Object] {
			continue
		}
		seen[t.Object] = true
		if workv1alpha1.KeyOf(t.Object) != b.Key {
			return false
		}
	}
	return true
}

// SentOf returns what b sends, from its targets and the clusters (sorted
// by name); false when a target's cluster is not declared. Targets come
// sorted by cluster, so each index is found by walking along.
func SentOf(b *Binding, clusters []*clusterv1alpha1.Cluster) (*Sent, bool) {
	s := &Sent{Clusters: make([]int32, 0, len(b.Targets)), Objects: make([]*unstructured.Unstructured, 0, len(b.Targets))}
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
				return nil, false
			}
		}
		s.Clusters, s.Objects = append(s.Clusters, int32(k)), append(s.Objects, t.Object)
	}
	return s, true
}

// GroupRanked is Group in general: each distinct object has its key
// computed and ranked once, and clusters order their objects by rank.
func GroupRanked(bindings []*Binding) []Work {
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

package diff

import (
	"bytes"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// pairMoves pairs, per object, the clusters it is removed from with the
// clusters it is added to, in cluster order: each pair is a move. The
// removals left over are deletions, the additions left over plain adds.
func pairMoves(all [][]*entry) []Move {
	removed := map[workv1alpha1.ObjectKey][]*entry{}
	added := map[workv1alpha1.ObjectKey][]*entry{}
	for _, entries := range all {
		for _, e := range entries {
			switch e.change {
			case Removed:
				removed[e.key] = append(removed[e.key], e)
			case Added:
				added[e.key] = append(added[e.key], e)
			}
		}
	}
	moves := []Move{}
	for k, rs := range removed {
		as := added[k]
		for i := 0; i < len(rs) && i < len(as); i++ {
			rs[i].movedTo, as[i].movedFrom, as[i].from = as[i].cluster, rs[i].cluster, rs[i]
			moves = append(moves, Move{Ref: refOf(k), From: rs[i].cluster, To: as[i].cluster})
		}
	}
	slices.SortFunc(moves, func(a, b Move) int {
		if c := cmpKey(a.Key(), b.Key()); c != 0 {
			return c
		}
		return strings.Compare(a.From, b.From)
	})
	return moves
}

// deletions lists, per object, the clusters it is removed from without
// moving elsewhere.
func deletions(all [][]*entry) []Deletion {
	by := map[workv1alpha1.ObjectKey][]string{}
	for _, entries := range all {
		for _, e := range entries {
			if e.change == Removed && e.movedTo == "" {
				by[e.key] = append(by[e.key], e.cluster)
			}
		}
	}
	out := make([]Deletion, 0, len(by))
	for k, clusters := range by {
		out = append(out, Deletion{Ref: refOf(k), Clusters: clusters})
	}
	slices.SortFunc(out, func(a, b Deletion) int { return cmpKey(a.Key(), b.Key()) })
	return out
}

// fillCluster counts the changes of one cluster and renders their diffs.
func fillCluster(c *Cluster, entries []*entry) {
	c.Objects = make([]Object, 0, len(entries))
	for _, e := range entries {
		switch e.change {
		case Added:
			c.Added++
		case Changed:
			c.Changed++
		case Removed:
			c.Removed++
		}
		c.Objects = append(c.Objects, Object{
			Ref:       refOf(e.key),
			Template:  template(e),
			Change:    e.change,
			MovedFrom: e.movedFrom,
			MovedTo:   e.movedTo,
			Diff:      objectDiff(e),
			Sealed:    sealedNote(e),
		})
	}
}

func template(e *entry) string {
	obj := e.head
	if obj == nil {
		obj = e.base
	}
	return obj.GetAnnotations()[workv1alpha1.AnnotationTemplate]
}

// objectDiff renders the unified diff of one entry (see Object.Diff).
func objectDiff(e *entry) string {
	file := e.key.Path()
	switch {
	case e.change == Changed:
		return manifestDiff(e.base, e.head, e.baseYAML, e.headYAML, "a/"+e.cluster+"/"+file, "b/"+e.cluster+"/"+file)
	case e.change == Added && e.from != nil:
		f := e.from
		if bytes.Equal(f.baseYAML, e.headYAML) {
			return ""
		}
		return manifestDiff(f.base, e.head, f.baseYAML, e.headYAML, "a/"+f.cluster+"/"+file, "b/"+e.cluster+"/"+file)
	case e.change == Added:
		return manifestDiff(nil, e.head, nil, e.headYAML, "/dev/null", "b/"+e.cluster+"/"+file)
	case e.movedTo != "":
		return ""
	default:
		return manifestDiff(e.base, nil, e.baseYAML, nil, "a/"+e.cluster+"/"+file, "/dev/null")
	}
}

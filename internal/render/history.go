package render

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/schedule"
)

// History builds the Previous of each render from the Works the last one
// recorded, as PreviousFromWorks does, for a caller that records every
// render (the controller). A template whose recorded objects are the very
// objects of the last call, on the same clusters in the same order, keeps
// what the last call built for it, and each object's annotations are read
// once while it stays recorded, so a commit that changes one template of
// thousands costs a walk over the recorded objects, not a reading of each.
// The Previous it returns shares those parts with the last one: neither
// may be changed (render never changes a Previous). Not safe for
// concurrent use; the zero History is ready.
type History struct {
	stamps  map[*unstructured.Unstructured]*stampRead
	entries map[workv1alpha1.ObjectKey]*[]historyEntry
	last    *Previous
}

// historyEntry is one recorded object of a template.
type historyEntry struct {
	cluster string
	obj     *unstructured.Unstructured
	st      *stampRead
}

// Next returns the Previous of works, equal to PreviousFromWorks(works).
func (h *History) Next(works []Work) *Previous {
	stamps := make(map[*unstructured.Unstructured]*stampRead, len(h.stamps))
	entries := make(map[workv1alpha1.ObjectKey]*[]historyEntry, len(h.entries))
	for _, w := range works {
		for _, obj := range w.Objects {
			st := stamps[obj]
			if st == nil {
				if st = h.stamps[obj]; st == nil {
					st = readStamp(obj)
				}
				stamps[obj] = st
			}
			if !st.ok {
				continue
			}
			list := entries[st.template]
			if list == nil {
				l := make([]historyEntry, 0, h.sizeOf(st.template))
				list = &l
				entries[st.template] = list
			}
			*list = append(*list, historyEntry{cluster: w.Cluster, obj: obj, st: st})
		}
	}
	prev := &Previous{Templates: make(map[workv1alpha1.ObjectKey]*PreviousTemplate, len(entries)),
		Recorded: make(map[workv1alpha1.ObjectKey]map[string]*unstructured.Unstructured, len(entries))}
	for key, list := range entries {
		if old := h.entries[key]; h.last != nil && old != nil && slices.Equal(*old, *list) {
			if t := h.last.Templates[key]; t != nil {
				prev.Templates[key] = t
			}
			prev.Recorded[key] = h.last.Recorded[key]
			continue
		}
		for _, e := range *list {
			addRecorded(prev, e.cluster, e.obj, e.st)
			addPrevious(prev, e.cluster, e.obj, e.st)
		}
		if t := prev.Templates[key]; t != nil {
			sortPlacement(t)
		}
	}
	h.stamps, h.entries, h.last = stamps, entries, prev
	return prev
}

// sizeOf is how many objects key had recorded last time.
func (h *History) sizeOf(key workv1alpha1.ObjectKey) int {
	if l := h.entries[key]; l != nil {
		return len(*l)
	}
	return 0
}

// sortPlacement orders a template's previous clusters by name.
func sortPlacement(t *PreviousTemplate) {
	slices.SortFunc(t.Placement.Clusters, func(a, b schedule.TargetCluster) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
}

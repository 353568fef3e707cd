package incremental

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// History builds the Previous of each render from the Works the last one
// recorded, as render.PreviousFromWorks does, for a caller that records every
// render (the controller). A template whose recorded objects are the very
// objects of the last call, on the same clusters in the same order, keeps
// what the last call built for it, and each object's annotations are read
// once while it stays recorded, so a commit that changes one template of
// thousands costs a walk over the recorded objects, not a reading of each.
// The Previous it returns shares those parts with the last one: neither
// may be changed (render never changes a Previous). Not safe for
// concurrent use; the zero History is ready.
type History struct {
	// objects are the objects the last call recorded.
	objects map[*unstructured.Unstructured]*historyObject
	// templates are the templates the last call recorded objects of.
	templates map[workv1alpha1.ObjectKey]*historyTemplate
	last      *render.Previous
	call      uint64
}

// historyObject is what History knows of one recorded object: its stamps
// and its template's entry, found once while the object stays recorded, so
// that a call hashes no template key for it.
type historyObject struct {
	st       *render.Stamp
	template *historyTemplate
}

// historyTemplate holds one template's recorded objects.
type historyTemplate struct {
	key workv1alpha1.ObjectKey
	// entries are the last call's; next, the current call's (when call is
	// the current call's number).
	entries, next []historyEntry
	call          uint64
}

// historyEntry is one recorded object of a template.
type historyEntry struct {
	cluster string
	obj     *unstructured.Unstructured
	st      *render.Stamp
}

// Next returns the Previous of works, equal to render.PreviousFromWorks(works).
func (h *History) Next(works []render.Work) *render.Previous {
	h.call++
	objects := make(map[*unstructured.Unstructured]*historyObject, len(h.objects))
	var touched []*historyTemplate
	for _, w := range works {
		for _, obj := range w.Objects {
			o := objects[obj]
			if o == nil {
				if o = h.objects[obj]; o == nil {
					o = &historyObject{st: render.ReadStamp(obj)}
					if key, ok := o.st.Template(); ok {
						o.template = h.template(key)
					}
				}
				objects[obj] = o
			}
			t := o.template
			if t == nil {
				continue // no template stamp: skipped
			}
			if t.call != h.call {
				t.call, t.next = h.call, make([]historyEntry, 0, len(t.entries))
				touched = append(touched, t)
			}
			t.next = append(t.next, historyEntry{cluster: w.Cluster, obj: obj, st: o.st})
		}
	}
	prev := &render.Previous{Templates: make(map[workv1alpha1.ObjectKey]*render.PreviousTemplate, len(touched)),
		Recorded: make(map[workv1alpha1.ObjectKey]map[string]*unstructured.Unstructured, len(touched))}
	templates := make(map[workv1alpha1.ObjectKey]*historyTemplate, len(touched))
	for _, t := range touched {
		key := t.key
		templates[key] = t
		if h.last != nil && slices.Equal(t.entries, t.next) {
			if pt := h.last.Templates[key]; pt != nil {
				prev.Templates[key] = pt
			}
			prev.Recorded[key] = h.last.Recorded[key]
		} else {
			for _, e := range t.next {
				prev.Add(e.cluster, e.obj, e.st)
			}
			if pt := prev.Templates[key]; pt != nil {
				render.SortPlacement(pt)
			}
		}
		t.entries, t.next = t.next, nil
	}
	h.objects, h.templates, h.last = objects, templates, prev
	return prev
}

// template returns the entry of the template key: the last call's when it
// recorded objects of key, else a new one. An object that stays recorded
// keeps its entry, and every entry an object holds is in h.templates: both
// hold exactly what the last call saw.
func (h *History) template(key workv1alpha1.ObjectKey) *historyTemplate {
	if t := h.templates[key]; t != nil {
		return t
	}
	t := &historyTemplate{key: key}
	if h.templates == nil {
		h.templates = map[workv1alpha1.ObjectKey]*historyTemplate{}
	}
	h.templates[key] = t // later objects of key in this call find it
	return t
}

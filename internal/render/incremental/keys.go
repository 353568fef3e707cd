package incremental

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// templateKeys remembers the last Render's templates, in the Set's order,
// with their keys, and their order by key. A load.Cache hands out the same
// read-only object for a template while its file is unchanged, so an
// unchanged fleet is neither keyed nor sorted again, and a commit that
// changes templates without adding, removing or renaming one gives the
// very keys in the very order: the memo then finds each template's state
// at its position (byPosition).
type templateKeys struct {
	objs []*unstructured.Unstructured
	keys []workv1alpha1.ObjectKey
	// names interns the groups, kinds and namespaces of keys: the many
	// templates of a namespace share one string, read (and compared) at
	// one place in memory rather than in each template's object.
	names map[string]string
	// order indexes objs by key; sorted are the keys in that order.
	order  []int
	sorted []workv1alpha1.ObjectKey
}

// sortedTemplates returns the order of the templates by key (stable: the
// index in ts of each), with their keys in that order, each computed once.
// When those are the keys of the last Render through tk, in the same
// order, the keys returned are the very slice it returned then
// (byPosition).
func sortedTemplates(ts []load.Template, tk *templateKeys) ([]int, []workv1alpha1.ObjectKey) {
	if tk.unchanged(ts) {
		return tk.order, tk.sorted
	}
	keys := tk.keysOf(ts)
	order, sorted := render.SortTemplates(keys)
	if slices.Equal(sorted, tk.sorted) {
		sorted = tk.sorted // the same keys, moved in the Set: state is still found by position
	}
	tk.objs = make([]*unstructured.Unstructured, len(ts))
	for i, t := range ts {
		tk.objs[i] = t.Object
	}
	tk.keys, tk.order, tk.sorted = keys, order, sorted
	return order, sorted
}

// unchanged reports whether ts have the keys of the last Render's
// templates, position by position, and then keeps ts's objects: the usual
// commit changes some templates' objects, not their keys, and costs no
// key compared and nothing allocated.
func (tk *templateKeys) unchanged(ts []load.Template) bool {
	if len(ts) != len(tk.objs) {
		return false
	}
	var moved []int
	for i, t := range ts {
		if t.Object != tk.objs[i] {
			if workv1alpha1.KeyOf(t.Object) != tk.keys[i] {
				return false
			}
			moved = append(moved, i)
		}
	}
	for _, i := range moved {
		tk.objs[i] = ts[i].Object
	}
	return true
}

// keysOf returns the key of each template: the last Render's where the
// same object is at the same position, or was anywhere.
func (tk *templateKeys) keysOf(ts []load.Template) []workv1alpha1.ObjectKey {
	keys := make([]workv1alpha1.ObjectKey, len(ts))
	var byObj map[*unstructured.Unstructured]workv1alpha1.ObjectKey // built when a template moved
	if len(tk.names) > 3*len(ts)+64 {
		tk.names = nil // names of templates long gone: start again
	}
	for i, t := range ts {
		if i < len(tk.objs) && tk.objs[i] == t.Object {
			keys[i] = tk.keys[i]
			continue
		}
		if byObj == nil {
			byObj = make(map[*unstructured.Unstructured]workv1alpha1.ObjectKey, len(tk.objs))
			for j, obj := range tk.objs {
				byObj[obj] = tk.keys[j]
			}
		}
		k, ok := byObj[t.Object]
		if !ok {
			k = tk.intern(workv1alpha1.KeyOf(t.Object))
		}
		keys[i] = k
	}
	return keys
}

// intern returns k with its group, kind and namespace interned.
func (tk *templateKeys) intern(k workv1alpha1.ObjectKey) workv1alpha1.ObjectKey {
	if tk.names == nil {
		tk.names = map[string]string{}
	}
	for _, s := range []*string{&k.Group, &k.Kind, &k.Namespace} {
		if v, ok := tk.names[*s]; ok {
			*s = v
		} else {
			tk.names[*s] = *s
		}
	}
	return k
}

// byPosition holds one value per template of a Render, in key order. The
// next Render finds its i-th template's value at i when its keys are the
// very slice the values were kept with (sortedTemplates returns it again
// when the templates have the same keys in the same order: a commit that
// changes templates without adding, removing or renaming one), else by key
// through an index. Callers compare a value with what it was computed from
// before using it, as they would a value found by key.
type byPosition[T any] struct {
	keys  []workv1alpha1.ObjectKey
	vals  []T
	same  bool
	index map[workv1alpha1.ObjectKey]int
}

// keep makes vals, one per key, the values of the next Render.
func (p *byPosition[T]) keep(keys []workv1alpha1.ObjectKey, vals []T) {
	*p = byPosition[T]{keys: keys, vals: vals}
}

// prepare readies p for a Render of the templates of keys. It must be
// called before get, which is then safe for concurrent use.
func (p *byPosition[T]) prepare(keys []workv1alpha1.ObjectKey) {
	p.same = len(keys) == len(p.keys) && (len(keys) == 0 || &keys[0] == &p.keys[0])
	if p.same || p.index != nil {
		return
	}
	p.index = make(map[workv1alpha1.ObjectKey]int, len(p.keys))
	for i, k := range p.keys {
		p.index[k] = i // the last of duplicates, as a map keyed by template would hold
	}
}

// get returns the value of the i-th template, of key key.
func (p *byPosition[T]) get(i int, key workv1alpha1.ObjectKey) (v T) {
	if p.same {
		if i < len(p.vals) {
			return p.vals[i]
		}
		return v
	}
	if j, ok := p.index[key]; ok {
		return p.vals[j]
	}
	return v
}

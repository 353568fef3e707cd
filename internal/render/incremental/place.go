package incremental

import (
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/render"
)

// placeAll places every template, in key order (order indexes the Set's
// templates, keys are theirs), through the placement memo pr; nil places
// each afresh (an input could not be encoded).
func (m *Memo) placeAll(pr *placeRun, st *runState, bindings []*render.Binding, in render.Input, clusters []*clusterv1alpha1.Cluster,
	ip *interpret.Interpreter, order []int, keys []workv1alpha1.ObjectKey) {
	if pr != nil {
		pr.state = st
		pr.prepare(keys)
	}
	parallel.For(len(order), func() func(int) {
		pl := render.NewPlacer(in, clusters, ip)
		return func(i int) { bindings[i] = pr.place(i, pl, &in.Set.Templates[order[i]], keys[i], in, ip) }
	})
	if pr != nil {
		pr.finish(keys)
	}
}

// place is render.Placer.Place through the memo: the i-th template, t, of
// key key, is the last Render's binding when nothing it read changed (placed),
// else it is matched and scheduled, each from the memo when its key holds.
func (r *placeRun) place(i int, pl *render.Placer, t *load.Template, key workv1alpha1.ObjectKey, in render.Input, ip *interpret.Interpreter) *render.Binding {
	if r == nil {
		return pl.Place(t, key)
	}
	prev := in.Previous.Lookup(key)
	st, ok := r.begin(i, key, t, prev)
	if !ok {
		return pl.Place(t, key) // a template that cannot be encoded is never remembered
	}
	if b := r.placed(i, &st, t, key, prev, in); b != nil {
		return b
	}
	b := pl.Begin(t, key)
	if b.Skipped != "" {
		return b
	}
	var claim *match.Claim
	if prev != nil {
		claim = prev.Claim
	}
	if t.Chart != nil {
		b.Choice = render.ChartChoice(t)
	} else {
		b.Choice = r.choose(i, &st, t, in.Set.Propagations, claim)
	}
	if p := pl.Claim(b); p != nil {
		r.schedule(i, &st, b, p, prev, pl, in, ip)
	}
	if !pl.End(b) {
		r.keepPlaced(i, b, in.Set.Propagations)
	}
	return b
}

package render

import (
	"runtime"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/restrict"
)

// The stages Render runs, in its order, exported so that
// internal/render/incremental runs the very same ones around its memo.
// Stages never change a Target another Result may hold: one that changes
// a binding's targets gives it a new slice first (ownTargets), so targets
// an earlier Render shared stay as they were.

// SortTemplates returns the order of templates by key (stable: the index
// in keys of each) and their keys in that order.
func SortTemplates(keys []workv1alpha1.ObjectKey) ([]int, []workv1alpha1.ObjectKey) {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	byKey := func(a, b int) int { return keys[a].Compare(keys[b]) }
	if !slices.IsSortedFunc(order, byKey) {
		slices.SortStableFunc(order, byKey)
	}
	sorted := make([]workv1alpha1.ObjectKey, len(keys))
	for i, j := range order {
		sorted[i] = keys[j]
	}
	return order, sorted
}

// AddDependencies implements propagateDeps (deps.go).
func AddDependencies(bindings []*Binding, byKey *Index, ip *interpret.Interpreter) {
	addDependencies(bindings, byKey, ip)
}

// RenderTargets renders the targets of bindings, each by one worker with
// its own renderer, so the result does not depend on the schedule. With
// fewer bindings than workers (a commit that changed one template), the
// variants of each binding are spread over the workers instead.
func RenderTargets(bindings []*Binding, clusters []*clusterv1alpha1.Cluster, overrides func(string) []load.Override, ip *interpret.Interpreter) {
	if len(bindings) < runtime.GOMAXPROCS(0) {
		r := newRenderer(clusters, overrides, ip)
		r.spread = true
		for _, b := range bindings {
			r.renderTargets(b)
		}
		return
	}
	parallel.For(len(bindings), func() func(int) {
		r := newRenderer(clusters, overrides, ip)
		return func(i int) { r.renderTargets(bindings[i]) }
	})
}

// PreserveLabels puts the labels statePreservation kept on the copies of
// each binding (injectPreserved).
func PreserveLabels(bindings []*Binding, prev *Previous) {
	for _, b := range bindings {
		injectPreserved(b, prev.lookup(b.Key))
	}
}

// Check is a restriction policy's verdict on one rendered object of the
// template in file source; nil admits it.
type Check func(obj *unstructured.Unstructured, source string) *restrict.Refusal

// RestrictTargets refuses the rendered objects check denies (restrict.go);
// skip, when not nil, marks bindings whose objects check admitted already.
func RestrictTargets(bindings []*Binding, check Check, skip []bool) {
	restrictTargets(bindings, check, skip)
}

// EndEvictions ends the Gracefully evictions whose new placement is
// healthy and drops the dependency targets that went with them.
func EndEvictions(bindings []*Binding, in Input, clusters []*clusterv1alpha1.Cluster, byKey *Index) {
	if endHealthyEvictions(bindings, in.Previous, in.Health, clusters) {
		detachDependencies(bindings, byKey)
	}
}

// KeepRecorded applies the history to the rendered bindings (safety.go);
// unfailed, when not nil, marks bindings known to have no failed target.
func KeepRecorded(r *Result, prev *Previous, byKey *Index, unfailed []bool) {
	keepRecorded(r, prev, byKey, unfailed)
}

// Index finds a Render's bindings by key, through a map built on first
// use: most Renders never look one up.
type Index struct {
	bindings []*Binding
	byKey    map[workv1alpha1.ObjectKey]*Binding
}

// NewIndex indexes bindings.
func NewIndex(bindings []*Binding) *Index { return &Index{bindings: bindings} }

// get returns the binding of key (the last of duplicates), nil if none.
func (x *Index) get(key workv1alpha1.ObjectKey) *Binding {
	if x.byKey == nil {
		x.byKey = make(map[workv1alpha1.ObjectKey]*Binding, len(x.bindings))
		for _, b := range x.bindings {
			x.byKey[b.Key] = b
		}
	}
	return x.byKey[key]
}

// ownTargets gives b a slice of targets of its own, with a copy of its
// i-th target, before a stage changes that target: the slice and the
// targets may be an earlier Result's. It returns the copy.
func ownTargets(b *Binding, i int, owned *bool) *Target {
	if !*owned {
		b.Targets = slices.Clone(b.Targets)
		*owned = true
	}
	cp := *b.Targets[i]
	b.Targets[i] = &cp
	return &cp
}

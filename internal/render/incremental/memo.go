package incremental

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/render"
)

// Memo keeps what each template rendered to in the last Render, with a
// digest of everything rendering read: the template, its placement (policy,
// clusters, replicas, evictions, suspension), the override policies of its
// namespace and the declared clusters. The next Render builds the objects
// of a template again only when that digest changed, so a commit that
// changes one template renders one template. Matching and scheduling are
// remembered too, keyed by everything they read, live cluster state
// included (placememo.go), and a template whose targets came through
// every stage unchanged shares them with the next Render (settle.go).
// Inputs that are the very objects a key was computed from (the loader's
// cache hands out the same ones while their files are unchanged) are not
// digested again, and per-template state is found by position while the
// templates keep their keys (keys.go), so that an unchanged template costs
// a copy of its last binding, not work per cluster.
// A Memo is for one Render at a time. The Results of Renders through it
// share targets, objects, clusters and Works' object lists with it and
// with each other: callers must not change them.
type Memo struct {
	entries byPosition[memoEntry]
	// placements remembers matching and scheduling (placememo.go).
	placements byPosition[placeEntry]
	// verdicts remembers the restriction policy's answer per rendered
	// object (restrict.go).
	verdicts map[*unstructured.Unstructured]verdict
	// settled are the bindings whose targets the next Render may share
	// (settle.go).
	settled byPosition[*settled]
	// policyDigests, templateKeys, clusterDigests and effective spare
	// encoding and sorting what did not change (ptrdigest.go, keys.go,
	// clustermemo.go).
	policyDigests  policyDigests
	templateKeys   templateKeys
	clusterDigests clusterDigests
	effective      effectiveMemo
	// group is the last grouping of objects into Works (group.go).
	group groupMemo
	// Rendered and Reused count the templates the last Render built and
	// took from the memo; Scheduled counts those it scheduled.
	Rendered, Reused, Scheduled int
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{}
}

// Render is render.Render through the memo: the same stages in the same
// order, each skipping what its memo says did not change.
func (m *Memo) Render(in render.Input) *render.Result {
	in, charts := render.ExpandCharts(in)
	clusters := m.effectiveClusters(in)
	m.policyDigests.next()
	ip := in.Set.Interpreter()
	var pr *placeRun
	var digests sync.WaitGroup
	digests.Go(func() { pr = m.newPlaceRun(in, clusters, ip, len(in.Set.Templates)) }) // meanwhile, sort
	order, keys := sortedTemplates(in.Set.Templates, &m.templateKeys)
	digests.Wait()
	r := &render.Result{Clusters: clusters, Bindings: make([]*render.Binding, len(order))}
	st := newRunState(len(order))
	m.placeAll(pr, st, r.Bindings, in, clusters, ip, order, keys)
	byKey := render.NewIndex(r.Bindings)
	render.AddDependencies(r.Bindings, byKey, ip)
	st.unshareExtended(r.Bindings)
	m.renderAll(st, r.Bindings, keys, clusters, render.OverridesByNamespace(in.Set.Overrides), ip)
	render.PreserveLabels(r.Bindings, in.Previous)
	check, restrictions, restrictionsOK := m.restrictions(in.Options.Restrictions)
	render.RestrictTargets(r.Bindings, check, st.admitted(r.Bindings, restrictions, restrictionsOK))
	render.EndEvictions(r.Bindings, in, clusters, byKey)
	render.KeepRecorded(r, in.Previous, byKey, st.stillShared(r.Bindings))
	render.FinishCharts(r, charts)
	r.Works = m.groupAll(st, r.Bindings, keys, clusters)
	m.settle(st, r.Bindings, keys, restrictions, restrictionsOK)
	return r
}

type memoEntry struct {
	sum     [sha256.Size]byte
	targets map[string]memoTarget
	// inputs are what sum was computed from when the binding's placement
	// has a key: while they are the same, so is sum.
	inputs memoKeyInputs
	deps   []string
}

// memoKeyInputs are the parts of a render memo key besides the
// dependencies.
type memoKeyInputs struct {
	placement, overrides [sha256.Size]byte
	overwrite            bool
}

// memoTarget is the rendering of a template for one cluster. Objects are
// never changed once rendered (frozen copies are deep copies), so they are
// shared between Renders.
type memoTarget struct {
	object    *unstructured.Unstructured
	overrides *override.Result
	err       string
	failure   *render.RenderError
}

// memoInputs is what, besides the template, the objects of a binding
// depend on.
type memoInputs struct {
	Policy       *render.PolicyRef
	Winner       any `json:",omitempty"`
	Overwrite    bool
	Preserve     bool
	DriftMode    string
	AffinityName string
	DependencyOf []string
	Workload     bool
	Targets      []memoTargetInput
	Overrides    [sha256.Size]byte
	Clusters     [sha256.Size]byte
	// Interpreter identifies the customization scripts of the kind.
	Interpreter [sha256.Size]byte
}

type memoTargetInput struct {
	Cluster   string
	Replicas  int32
	Scheduled bool
	Suspended bool
	Frozen    bool
}

// digest returns the digest of b's inputs, false when one cannot be
// encoded (then b is rendered); placement is b's placement key, zero when
// it has none.
func digest(b *render.Binding, placement, overrides, clusters [sha256.Size]byte, ip *interpret.Interpreter) ([sha256.Size]byte, bool) {
	if placement != ([sha256.Size]byte{}) {
		// The placement key covers the template, the policy, every
		// cluster, the scripts and the targets; what dependencies and
		// overrides add is written after it.
		var buf keyBuffer
		k := keyStr(buf[:0], "render")
		k = keySum(k, placement)
		k = keySum(k, overrides)
		k = keyBool(k, b.Overwrite)
		k = keyInt(k, int64(len(b.DependencyOf)))
		for _, d := range b.DependencyOf {
			k = keyStr(k, d)
		}
		return sha256.Sum256(k), true
	}
	in := memoInputs{Policy: b.Policy, Overwrite: b.Overwrite, Preserve: b.Preserve, DriftMode: b.DriftMode, AffinityName: b.AffinityName,
		DependencyOf: b.DependencyOf, Overrides: overrides, Clusters: clusters, Interpreter: ip.Digest(b.Template.Object)}
	if b.Choice.Winner != nil {
		in.Winner = b.Choice.Winner.Policy.Policy.Spec.Placement
	}
	if b.Decision != nil {
		in.Workload = b.Decision.Workload
	}
	for _, t := range b.Targets {
		in.Targets = append(in.Targets, memoTargetInput{Cluster: t.Cluster, Replicas: t.Replicas, Scheduled: t.Scheduled,
			Suspended: t.Suspended, Frozen: t.Object != nil})
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	if b.Template.Digest != ([sha256.Size]byte{}) {
		// The loader's digest of the document, plus the namespace it
		// defaulted (a change of scope changes the key, not the document).
		h.Write(b.Template.Digest[:])
		h.Write([]byte(b.Template.Object.GetNamespace()))
	} else if enc.Encode(b.Template.Object.Object) != nil {
		return [sha256.Size]byte{}, false
	}
	if enc.Encode(in) != nil {
		return [sha256.Size]byte{}, false
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, true
}

// restore fills the targets of b from e, the memo's entry of its template,
// when its digest is sum.
func restore(b *render.Binding, e memoEntry, sum [sha256.Size]byte) bool {
	if e.targets == nil || e.sum != sum {
		return false
	}
	for _, t := range b.Targets {
		if t.Object != nil {
			continue // frozen
		}
		mt, ok := e.targets[t.Cluster]
		if !ok {
			return false
		}
		t.Object, t.Overrides, t.Error, t.Failure = mt.object, mt.overrides, mt.err, mt.failure
	}
	return true
}

// entryOf is what b rendered to under sum, computed from overrides and b,
// of placement key placement.
func entryOf(b *render.Binding, sum, placement, overrides [sha256.Size]byte) memoEntry {
	e := memoEntry{sum: sum, targets: make(map[string]memoTarget, len(b.Targets)),
		inputs: memoKeyInputs{placement: placement, overrides: overrides, overwrite: b.Overwrite}, deps: b.DependencyOf}
	for _, t := range b.Targets {
		e.targets[t.Cluster] = memoTarget{object: t.Object, overrides: t.Overrides, err: t.Error, failure: t.Failure}
	}
	return e
}

// nsSum is the digest of a namespace's override policies.
type nsSum struct {
	sum [sha256.Size]byte
	ok  bool
}

// renderAll renders the targets of every binding, one per key of keys,
// through the memo, and keeps only this Render's templates in it.
func (m *Memo) renderAll(st *runState, bindings []*render.Binding, keys []workv1alpha1.ObjectKey, clusters []*clusterv1alpha1.Cluster,
	overrides func(string) []load.Override, ip *interpret.Interpreter) {
	m.Rendered, m.Reused = 0, 0
	var clusterSum [sha256.Size]byte
	clustersOK, clustersDone := false, false
	overrideSums := map[string]nsSum{}
	m.entries.prepare(keys)
	seen := make([]memoEntry, len(bindings))
	var todo []int
	var sums, osums [][sha256.Size]byte
	var keep []bool
	var lastNS string // bindings come in key order, namespace first
	var osum nsSum
	for i, b := range bindings {
		if ns := b.Key.Namespace; i == 0 || ns != lastNS {
			var known bool
			if osum, known = overrideSums[ns]; !known {
				osum.sum, osum.ok = m.overridesDigest(overrides(ns))
				overrideSums[ns] = osum
			}
			lastNS = ns
		}
		placement := st.placement[i]
		if placement == ([sha256.Size]byte{}) && !clustersDone {
			// Only keys without a placement digest read the clusters.
			clusterSum, clustersOK = digestOf(clusterInputs(clusters))
			clustersDone = true
		}
		e := m.entries.get(i, b.Key)
		sum, ok := renderKey(b, e, placement, osum, clusterSum, clustersOK, ip)
		if st.shared[i] != nil {
			if ok && e.targets != nil && e.sum == sum {
				m.Reused++
				seen[i] = e
				continue // its targets are rendered already
			}
			st.unshare(i, b)
		}
		if ok && restore(b, e, sum) {
			m.Reused++
			seen[i] = e
			continue
		}
		todo, sums, osums, keep = append(todo, i), append(sums, sum), append(osums, osum.sum), append(keep, ok)
	}
	rendered := make([]*render.Binding, len(todo))
	for j, i := range todo {
		rendered[j] = bindings[i]
	}
	render.RenderTargets(rendered, clusters, overrides, ip)
	m.Rendered = len(todo)
	for j, i := range todo {
		if keep[j] {
			seen[i] = entryOf(bindings[i], sums[j], st.placement[i], osums[j])
		}
	}
	m.entries.keep(keys, seen)
	st.markRendered(bindings)
}

// renderKey returns the render memo's key of b, whose entry of the last
// Render is e; false when it cannot be computed (b is rendered then).
func renderKey(b *render.Binding, e memoEntry, placement [sha256.Size]byte, osum nsSum, clusterSum [sha256.Size]byte, clustersOK bool,
	ip *interpret.Interpreter) ([sha256.Size]byte, bool) {
	if e.targets != nil && placement != ([sha256.Size]byte{}) &&
		e.inputs == (memoKeyInputs{placement: placement, overrides: osum.sum, overwrite: b.Overwrite}) && slices.Equal(e.deps, b.DependencyOf) {
		return e.sum, osum.ok // the very inputs of its key
	}
	sum, digested := digest(b, placement, osum.sum, clusterSum, ip)
	return sum, osum.ok && digested && (clustersOK || placement != ([sha256.Size]byte{}))
}

// clusterInputs is what overrides read of the clusters: their identity,
// labels and spec, not their live status.
func clusterInputs(clusters []*clusterv1alpha1.Cluster) any {
	type in struct {
		Name        string
		Labels      map[string]string
		Annotations map[string]string
		Spec        clusterv1alpha1.ClusterSpec
	}
	out := make([]in, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, in{Name: c.Name, Labels: c.Labels, Annotations: c.Annotations, Spec: c.Spec})
	}
	return out
}

// overridesDigest digests the override policies of a namespace, each
// policy's digest remembered by m.
func (m *Memo) overridesDigest(os []load.Override) ([sha256.Size]byte, bool) {
	h := sha256.New()
	for _, o := range os {
		sum, ok := m.policyDigests.of(o.Policy, o.Policy)
		if !ok {
			return [sha256.Size]byte{}, false
		}
		h.Write(sum[:])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, true
}

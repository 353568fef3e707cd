package incremental

import (
	"crypto/sha256"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/schedule"
)

// The placement memo: matching and scheduling read live cluster state,
// which must never be served stale, so that state is part of the key
// rather than left out of it. A template is matched again only when the
// digest of what matching reads changed (its document and namespace, every
// propagation policy, its previous claim), and scheduled again only when
// the digest of what scheduling reads changed (its document, the winning
// policy, every effective cluster with its live status and taints, the
// interpreter's scripts for its kind, its previous placement). Placements
// that depend on the clock or on per-template health (failover with a
// tainted or unhealthy cluster in the previous placement, pending
// evictions) are never remembered. Render-wide digests are computed once
// per Render, not per template.

// matchEntry is a remembered policy choice: candidates by their index in
// the Set's propagations, winner first.
type matchEntry struct {
	sum        [sha256.Size]byte
	candidates []matchCandidate
	winner     bool
	reason     string
	// built is the Choice last built, on the policies whose first element
	// is builtOn: a load.Cache hands out the very list while no policy
	// changed, and the Choice (read-only) is shared then.
	built   match.Choice
	builtOn *load.Propagation
}

type matchCandidate struct {
	index    int
	explicit int32
	implicit match.Priority
}

// scheduleEntry is what schedulePolicy decided for a template.
type scheduleEntry struct {
	sum [sha256.Size]byte
	// workload is the decision's: whether the template is a workload
	// depends only on the template and its kind's scripts, which are in
	// the key, so a key that was not a workload's is looked up again with
	// the clusters' digest without their capacity.
	workload      bool
	decision      *schedule.Decision // never changed once made, so shared
	scheduleError string
	keptPrevious  bool
	affinityName  string
	targets       []placedTarget
}

// placedTarget is what scheduling sets of a Target (kept small: the memo
// holds one per template and cluster).
type placedTarget struct {
	cluster              string
	replicas             int32
	scheduled, suspended bool
}

// placeEntry is what the memo keeps of one template's placement.
type placeEntry struct {
	match    *matchEntry
	schedule *scheduleEntry
	// inputs are what the keys of match and schedule were computed from,
	// and tsum the template's digest among them.
	inputs placeInputs
	tsum   [sha256.Size]byte
	// placed is what place returned, when it shared a settled binding's
	// targets, on the policies whose first element is placedOn (placed).
	placed   *placedBinding
	placedOn *load.Propagation
}

// placedBinding is a binding as place returned it, with the memo's record
// of it (runState).
type placedBinding struct {
	binding   render.Binding
	placement [sha256.Size]byte
	shared    *sharedTargets
	sameKey   bool
	sent      *render.Sent
}

// placeInputs identify, without reading them, the inputs of a template's
// placement keys: the template's object and document digest (a load.Cache
// hands out the same read-only object while the file is unchanged), its
// previous placement (never changed once built; History hands out the
// same one while the template's recorded objects are unchanged) and the
// digest of the render-wide inputs (epoch). While they are the very same,
// so are the keys, which are then not computed again.
type placeInputs struct {
	obj    *unstructured.Unstructured
	digest [sha256.Size]byte
	prev   *render.PreviousTemplate
	epoch  [sha256.Size]byte
}

// placeState is one template's placement memo while a worker places it.
type placeState struct {
	prior placeEntry
	tsum  [sha256.Size]byte
	// same is set when prior's keys hold (its inputs are this template's).
	same bool
	// content digests the template and its kind's scripts (zero until
	// computed).
	content [sha256.Size]byte
}

// placeRun is the placement memo during one Render: the render-wide
// digests, the entries of the previous Render (read by the workers) and
// those of this one (each written by the worker of its template).
type placeRun struct {
	memo  *Memo
	prior byPosition[placeEntry]
	fresh []placeEntry
	// policies digests every propagation policy in order; policySums
	// digests each one, by index.
	policies   [sha256.Size]byte
	policySums [][sha256.Size]byte
	policyAt   map[*load.Propagation]int
	// clusters digests every effective cluster, live status included;
	// uncounted leaves out the capacity (resourceSummary), which only the
	// estimator reads, for workloads alone.
	clusters, uncounted [sha256.Size]byte
	// tainted lists the clusters carrying a NoExecute taint (readiness
	// included): failover may evict from them depending on the clock.
	tainted map[string]bool
	// scheduled counts templates scheduled for real, per template index.
	scheduled []bool
	// bindings hold the bindings placed returns, one allocation for all
	// the templates instead of one each.
	bindings []render.Binding
	// state is the Render's record of the bindings.
	state *runState
	// epoch digests every render-wide input of the keys and of skipping:
	// options, policies, clusters and the interpreter's scripts.
	epoch [sha256.Size]byte
}

// newPlaceRun digests the render-wide inputs of placement for n templates;
// nil (no memo) when m is nil or an input cannot be encoded.
func (m *Memo) newPlaceRun(in render.Input, clusters []*clusterv1alpha1.Cluster, ip *interpret.Interpreter, n int) *placeRun {
	if m == nil {
		return nil
	}
	set := in.Set
	r := &placeRun{memo: m, prior: m.placements, fresh: make([]placeEntry, n), bindings: make([]render.Binding, n),
		scheduled: make([]bool, n), policySums: make([][sha256.Size]byte, len(set.Propagations)),
		policyAt: make(map[*load.Propagation]int, len(set.Propagations)), tainted: map[string]bool{}}
	all := sha256.New()
	for i := range set.Propagations {
		p := &set.Propagations[i]
		sum, ok := m.policyDigests.of(p.Policy, struct {
			ClusterScoped bool
			Policy        any
		}{p.ClusterScoped, p.Policy})
		if !ok {
			return nil
		}
		r.policySums[i] = sum
		r.policyAt[p] = i
		all.Write(r.policySums[i][:])
	}
	all.Sum(r.policies[:0])
	taints := sha256.New()
	for _, tp := range set.TaintPolicies {
		sum, ok := m.policyDigests.of(tp.Policy, tp.Policy)
		if !ok {
			return nil
		}
		taints.Write(sum[:])
	}
	var taintsSum [sha256.Size]byte
	taints.Sum(taintsSum[:0])
	var ok bool
	// identity, labels, spec and live status: all that filters and estimates read
	if r.clusters, r.uncounted, ok = m.clusterDigests.of(set, in.Status, clusters, taintsSum); !ok {
		return nil
	}
	for _, c := range clusters {
		if render.NoExecuteTainted(c) {
			r.tainted[c.Name] = true
		}
	}
	var buf keyBuffer
	k := keyStr(buf[:0], "epoch")
	k = keyBool(k, in.Options.NamespaceAutoPropagation) // what skipping reads besides the key
	k = keyInt(k, int64(len(in.Options.SkippedNamespaces)))
	for _, re := range in.Options.SkippedNamespaces {
		k = keyStr(k, re.String())
	}
	k = keySum(k, r.policies)
	k = keySum(k, r.clusters)
	k = keySum(k, r.uncounted)
	r.epoch = sha256.Sum256(keySum(k, ip.Sum()))
	return r
}

// begin starts placing the i-th template, of key t and previous placement
// prev: it finds the template's entry of the last Render and its digest;
// false when the template cannot be encoded.
func (r *placeRun) begin(i int, key workv1alpha1.ObjectKey, t *load.Template, prev *render.PreviousTemplate) (placeState, bool) {
	st := placeState{prior: r.prior.get(i, key)}
	in := placeInputs{obj: t.Object, digest: t.Digest, prev: prev, epoch: r.epoch}
	if in.digest != ([sha256.Size]byte{}) && st.prior.inputs == in {
		st.tsum, st.same = st.prior.tsum, true
	} else {
		var ok bool
		if st.tsum, ok = templateSum(t, key.Namespace); !ok {
			return st, false
		}
	}
	r.fresh[i].inputs, r.fresh[i].tsum = in, st.tsum
	return st, true
}

// prepare readies the memo's entries for the templates of keys, in order.
func (r *placeRun) prepare(keys []workv1alpha1.ObjectKey) {
	r.prior.prepare(keys)
	r.memo.settled.prepare(keys)
}

// finish keeps only this Render's entries, of the templates of keys, in
// the memo.
func (r *placeRun) finish(keys []workv1alpha1.ObjectKey) {
	r.memo.Scheduled = 0
	for _, s := range r.scheduled {
		if s {
			r.memo.Scheduled++
		}
	}
	r.memo.placements.keep(keys, r.fresh)
}

// placed returns the i-th template's binding as the last Render's place
// returned it, when that shared a settled binding's targets and nothing it
// read changed: the template and its previous placement are the very same
// and so are the render-wide inputs (st.same), the policies are the very
// list (the Choice points into it), the settled binding is the one the last
// Render left, and scheduling still does not depend on the clock. Placing
// the template again would give the same: matching and scheduling from the
// memo, the settled targets shared. A fleet commit that changes one
// template then costs a copy per other template, not a placement.
func (r *placeRun) placed(i int, st *placeState, t *load.Template, key workv1alpha1.ObjectKey, prev *render.PreviousTemplate, in render.Input) *render.Binding {
	snap := st.prior.placed
	if snap == nil || !st.same || st.prior.placedOn != first(in.Set.Propagations) || snap.shared == nil ||
		r.memo.settled.get(i, key) != snap.shared.settled {
		return nil
	}
	if prev != nil && !clockFree(snap.binding.Choice.Winner.Policy, prev, in.Unhealthy.Of(key), r.tainted) {
		return nil // (without a previous placement, scheduling never reads the clock)
	}
	b := &r.bindings[i]
	*b = snap.binding
	b.Key, b.Template = key, t
	r.state.placement[i], r.state.shared[i], r.state.sameKey[i], r.state.sent[i] = snap.placement, snap.shared, snap.sameKey, snap.sent
	r.fresh[i] = st.prior
	return b
}

// keepPlaced remembers b, as place returns it for the i-th template, when
// it shares a settled binding's targets (see placed).
func (r *placeRun) keepPlaced(i int, b *render.Binding, policies []load.Propagation) {
	if r.state.shared[i] == nil {
		return
	}
	r.fresh[i].placed = &placedBinding{binding: *b, placement: r.state.placement[i], shared: r.state.shared[i]}
	r.fresh[i].placedOn = first(policies)
}

// choose is match.Policies through the memo; i is the template's index.
func (r *placeRun) choose(i int, st *placeState, t *load.Template, policies []load.Propagation, claim *match.Claim) match.Choice {
	if e := st.prior.match; e != nil && st.same {
		r.fresh[i].match = e
		return e.choice(policies)
	}
	var buf keyBuffer
	k := keyStr(buf[:0], "match")
	k = keySum(k, st.tsum)
	k = keySum(k, r.policies)
	k = keyBool(k, claim != nil)
	if claim != nil {
		k = keyBool(k, claim.ClusterScoped)
		k = keyStr(k, claim.Namespace)
		k = keyStr(k, claim.Name)
	}
	sum := sha256.Sum256(k)
	if e := st.prior.match; e != nil && e.sum == sum {
		r.fresh[i].match = e
		return e.choice(policies)
	}
	c := match.Policies(t.Object, t.Object.GetNamespace() != "", policies, claim)
	e := &matchEntry{sum: sum, winner: c.Winner != nil, reason: c.Reason, built: c, builtOn: first(policies)}
	for _, cand := range c.Candidates {
		e.candidates = append(e.candidates, matchCandidate{index: r.policyAt[cand.Policy], explicit: cand.Explicit, implicit: cand.Implicit})
	}
	r.fresh[i].match = e
	return c
}

// choice rebuilds the Choice on this Render's policies, unless it was
// built on the very same list. The entry is its template's: only the
// worker placing that template calls it.
func (e *matchEntry) choice(policies []load.Propagation) match.Choice {
	if on := first(policies); on == e.builtOn && on != nil {
		return e.built
	}
	c := match.Choice{Reason: e.reason}
	if len(e.candidates) == 0 {
		return c
	}
	c.Candidates = make([]match.Candidate, len(e.candidates))
	for j, mc := range e.candidates {
		c.Candidates[j] = match.Candidate{Policy: &policies[mc.index], Explicit: mc.explicit, Implicit: mc.implicit}
	}
	if e.winner {
		c.Winner = &c.Candidates[0]
	}
	e.built, e.builtOn = c, first(policies)
	return c
}

// first returns the first of policies, nil if none.
func first(policies []load.Propagation) *load.Propagation {
	if len(policies) == 0 {
		return nil
	}
	return &policies[0]
}

// schedule is render's scheduling (pl.Schedule) through the memo; i is
// the template's index and st its placement state.
func (r *placeRun) schedule(i int, st *placeState, b *render.Binding, p *load.Propagation, prev *render.PreviousTemplate,
	pl *render.Placer, in render.Input, ip *interpret.Interpreter) {
	remember := clockFree(p, prev, in.Unhealthy.Of(b.Key), r.tainted)
	prior := st.prior.schedule
	var sum [sha256.Size]byte
	if remember {
		if prior != nil && st.same {
			sum = prior.sum
		} else {
			sum = r.scheduleKey(p, st.contentSum(b, ip), prior == nil || prior.workload, prev)
		}
		if e := prior; e != nil && e.sum == sum {
			if s := r.memo.settled.get(i, b.Key); s != nil && s.scheduleSum == sum {
				e.share(b, s)
				r.state.shared[i] = &sharedTargets{settled: s, placement: e}
			} else {
				e.restore(b)
			}
			r.fresh[i].schedule = e
			r.state.placement[i] = sum
			return
		}
	}
	r.scheduled[i] = true
	pl.Schedule(b, p, prev)
	if !remember || b.ScriptFailed || len(b.Evictions) > 0 {
		return // a script error is typed, and evictions hold copies and times: both are made afresh
	}
	sum = r.scheduleKey(p, st.contentSum(b, ip), b.Decision.Workload, prev)
	e := &scheduleEntry{sum: sum, workload: b.Decision.Workload, decision: b.Decision, scheduleError: b.ScheduleError,
		keptPrevious: b.KeptPrevious, affinityName: b.AffinityName, targets: make([]placedTarget, len(b.Targets))}
	for j, t := range b.Targets {
		e.targets[j] = placedTarget{cluster: t.Cluster, replicas: t.Replicas, scheduled: t.Scheduled, suspended: t.Suspended}
	}
	r.fresh[i].schedule = e
	r.state.placement[i] = sum
}

// contentSum digests the template and its kind's scripts, once.
func (st *placeState) contentSum(b *render.Binding, ip *interpret.Interpreter) [sha256.Size]byte {
	if st.content == ([sha256.Size]byte{}) {
		var buf keyBuffer
		st.content = sha256.Sum256(keySum(keySum(keyStr(buf[:0], "content"), st.tsum), ip.Digest(b.Template.Object)))
	}
	return st.content
}

// scheduleKey digests what scheduling reads: the template and its kind's
// scripts (content), the winning policy, the clusters (with their capacity
// for a workload) and the previous placement.
func (r *placeRun) scheduleKey(p *load.Propagation, content [sha256.Size]byte, workload bool, prev *render.PreviousTemplate) [sha256.Size]byte {
	var buf keyBuffer
	k := keyStr(buf[:0], "schedule")
	k = keySum(k, content)
	k = keySum(k, r.policySums[r.policyAt[p]])
	k = keyBool(k, workload)
	if workload {
		k = keySum(k, r.clusters)
	} else {
		k = keySum(k, r.uncounted)
	}
	k = keyBool(k, prev != nil)
	if prev != nil {
		k = keyStr(k, prev.Placement.AffinityName)
		k = keyInt(k, int64(len(prev.Placement.Clusters)))
		for _, tc := range prev.Placement.Clusters {
			k = keyStr(k, tc.Name)
			k = keyInt(k, int64(tc.Replicas))
		}
		k = keyInt(k, int64(len(prev.Placement.EvictedClusters)))
		for _, name := range prev.Placement.EvictedClusters {
			k = keyStr(k, name)
		}
	}
	return sha256.Sum256(k)
}

// clockFree reports whether scheduling under p depends neither on the
// clock nor on the template's health: evict reads them only for pending
// evictions and, under a failover policy, for previous clusters that carry
// a NoExecute taint or (application failover) report the template
// unhealthy.
func clockFree(p *load.Propagation, prev *render.PreviousTemplate, unhealthy map[string]time.Time, tainted map[string]bool) bool {
	if prev == nil {
		return true
	}
	if len(prev.Evictions) > 0 {
		return false
	}
	fo := p.Policy.Spec.Failover
	if fo == nil {
		return true
	}
	for _, tc := range prev.Placement.Clusters {
		if tainted[tc.Name] {
			return false
		}
		if _, ok := unhealthy[tc.Name]; ok && fo.Application != nil {
			return false
		}
	}
	return true
}

// share gives b the remembered decision with the targets of the settled
// binding s, shared.
func (e *scheduleEntry) share(b *render.Binding, s *settled) {
	b.Decision, b.ScheduleError, b.KeptPrevious, b.AffinityName = e.decision, e.scheduleError, e.keptPrevious, e.affinityName
	b.Targets = s.targets
}

// restore gives b the remembered decision, with targets of its own (later
// stages fill them in).
func (e *scheduleEntry) restore(b *render.Binding) {
	b.Decision, b.ScheduleError, b.KeptPrevious, b.AffinityName = e.decision, e.scheduleError, e.keptPrevious, e.affinityName
	slab := make([]render.Target, len(e.targets))
	b.Targets = make([]*render.Target, len(slab))
	for j, t := range e.targets {
		slab[j] = render.Target{Cluster: t.cluster, Replicas: t.replicas, Scheduled: t.scheduled, Suspended: t.suspended}
		b.Targets[j] = &slab[j]
	}
}

package render

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
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
}

// placeRun is the placement memo during one Render: the render-wide
// digests, the entries of the previous Render (read by the workers) and
// those of this one (each written by the worker of its template).
type placeRun struct {
	memo  *Memo
	prior map[workv1alpha1.ObjectKey]placeEntry
	fresh []placeEntry
	keys  []workv1alpha1.ObjectKey
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
}

// newPlaceRun digests the render-wide inputs of placement for n templates;
// nil (no memo) when m is nil or an input cannot be encoded.
func (m *Memo) newPlaceRun(set *load.Set, clusters []*clusterv1alpha1.Cluster, n int) *placeRun {
	if m == nil {
		return nil
	}
	r := &placeRun{memo: m, prior: m.placements, fresh: make([]placeEntry, n), keys: make([]workv1alpha1.ObjectKey, n),
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
	var ok, uncountedOK bool
	r.clusters, ok = digestOf(clusters) // identity, labels, spec and live status: all that filters and estimates read
	r.uncounted, uncountedOK = digestOf(withoutCapacity(clusters))
	if !ok || !uncountedOK {
		return nil
	}
	for _, c := range clusters {
		if len(noExecuteTaints(c)) > 0 {
			r.tainted[c.Name] = true
		}
	}
	return r
}

// withoutCapacity returns copies of clusters without their resourceSummary.
func withoutCapacity(clusters []*clusterv1alpha1.Cluster) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, len(clusters))
	for i, c := range clusters {
		cp := *c
		if c.Status != nil {
			st := *c.Status
			st.ResourceSummary = nil
			cp.Status = &st
		}
		out[i] = &cp
	}
	return out
}

// finish keeps only this Render's entries in the memo.
func (r *placeRun) finish() {
	if r == nil {
		return
	}
	out := make(map[workv1alpha1.ObjectKey]placeEntry, len(r.fresh))
	r.memo.Scheduled = 0
	for i, e := range r.fresh {
		if e.match != nil || e.schedule != nil {
			out[r.keys[i]] = e
		}
		if r.scheduled[i] {
			r.memo.Scheduled++
		}
	}
	r.memo.placements = out
}

// Memo keys are length-prefixed parts appended to a buffer, hashed once;
// callers start from a stack array (keyBuffer) so a short key allocates
// nothing.
type keyBuffer [512]byte

func keyStr(b []byte, s string) []byte {
	return append(keyInt(b, int64(len(s))), s...)
}

func keyInt(b []byte, n int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(n)) }

func keySum(b []byte, s [sha256.Size]byte) []byte { return append(b, s[:]...) }

func keyBool(b []byte, v bool) []byte {
	if v {
		return keyInt(b, 1)
	}
	return keyInt(b, 0)
}

// templateSum identifies a template's content: the loader's digest of its
// document and the namespace it defaulted (its key's), else its JSON;
// false when it cannot be encoded.
func templateSum(t *load.Template, namespace string) ([sha256.Size]byte, bool) {
	if t.Digest != ([sha256.Size]byte{}) {
		var buf keyBuffer
		k := keyStr(buf[:0], "document")
		k = keySum(k, t.Digest)
		k = keyStr(k, namespace)
		return sha256.Sum256(k), true
	}
	return digestOf(t.Object.Object)
}

// choose is match.Policies through the memo; i is the template's index.
func (r *placeRun) choose(i int, t *load.Template, tsum [sha256.Size]byte, key workv1alpha1.ObjectKey, policies []load.Propagation, claim *match.Claim) match.Choice {
	if r == nil {
		return match.Policies(t.Object, t.Object.GetNamespace() != "", policies, claim)
	}
	r.keys[i] = key
	var buf keyBuffer
	k := keyStr(buf[:0], "match")
	k = keySum(k, tsum)
	k = keySum(k, r.policies)
	k = keyBool(k, claim != nil)
	if claim != nil {
		k = keyBool(k, claim.ClusterScoped)
		k = keyStr(k, claim.Namespace)
		k = keyStr(k, claim.Name)
	}
	sum := sha256.Sum256(k)
	if e := r.prior[key].match; e != nil && e.sum == sum {
		r.fresh[i].match = e
		return e.choice(policies)
	}
	c := match.Policies(t.Object, t.Object.GetNamespace() != "", policies, claim)
	e := &matchEntry{sum: sum, winner: c.Winner != nil, reason: c.Reason}
	for _, cand := range c.Candidates {
		e.candidates = append(e.candidates, matchCandidate{index: r.policyAt[cand.Policy], explicit: cand.Explicit, implicit: cand.Implicit})
	}
	r.fresh[i].match = e
	return c
}

// choice rebuilds the Choice on this Render's policies.
func (e *matchEntry) choice(policies []load.Propagation) match.Choice {
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
	return c
}

// schedule is schedulePolicy through the memo; i is the template's index
// and tsum its templateSum.
func (r *placeRun) schedule(i int, b *Binding, p *load.Propagation, tsum [sha256.Size]byte, prev *PreviousTemplate, in Input,
	clusters []*clusterv1alpha1.Cluster, ip *interpret.Interpreter) {
	unhealthy := in.Unhealthy.of(b.Key)
	if r == nil {
		schedulePolicy(b, p.Policy, prev, clusters, unhealthy, in.Reflected.of(b.Key), in.Now, ip)
		return
	}
	remember := clockFree(p, prev, unhealthy, r.tainted)
	var buf keyBuffer
	content := sha256.Sum256(keySum(keySum(keyStr(buf[:0], "content"), tsum), ip.Digest(b.Template.Object)))
	prior := r.prior[b.Key].schedule
	var sum [sha256.Size]byte
	if remember {
		sum = r.scheduleKey(p, content, prior == nil || prior.workload, prev)
		if e := prior; e != nil && e.sum == sum {
			if s := r.memo.settled[b.Key]; s != nil && s.scheduleSum == sum {
				e.share(b, s)
			} else {
				e.restore(b)
			}
			r.fresh[i].schedule = e
			b.scheduleSum = sum
			return
		}
	}
	r.scheduled[i] = true
	schedulePolicy(b, p.Policy, prev, clusters, unhealthy, in.Reflected.of(b.Key), in.Now, ip)
	if !remember || b.ScriptFailed || len(b.Evictions) > 0 {
		return // a script error is typed, and evictions hold copies and times: both are made afresh
	}
	sum = r.scheduleKey(p, content, b.Decision.Workload, prev)
	e := &scheduleEntry{sum: sum, workload: b.Decision.Workload, decision: b.Decision, scheduleError: b.ScheduleError,
		keptPrevious: b.KeptPrevious, affinityName: b.AffinityName, targets: make([]placedTarget, len(b.Targets))}
	for j, t := range b.Targets {
		e.targets[j] = placedTarget{cluster: t.Cluster, replicas: t.Replicas, scheduled: t.Scheduled, suspended: t.Suspended}
	}
	r.fresh[i].schedule = e
	b.scheduleSum = sum
}

// scheduleKey digests what scheduling reads: the template and its kind's
// scripts (content), the winning policy, the clusters (with their capacity
// for a workload) and the previous placement.
func (r *placeRun) scheduleKey(p *load.Propagation, content [sha256.Size]byte, workload bool, prev *PreviousTemplate) [sha256.Size]byte {
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
func clockFree(p *load.Propagation, prev *PreviousTemplate, unhealthy map[string]time.Time, tainted map[string]bool) bool {
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
func (e *scheduleEntry) share(b *Binding, s *settled) {
	b.Decision, b.ScheduleError, b.KeptPrevious, b.AffinityName = e.decision, e.scheduleError, e.keptPrevious, e.affinityName
	b.Targets, b.shared = s.targets, &sharedTargets{settled: s, placement: e}
}

// restore gives b the remembered decision, with targets of its own (later
// stages fill them in).
func (e *scheduleEntry) restore(b *Binding) {
	b.Decision, b.ScheduleError, b.KeptPrevious, b.AffinityName = e.decision, e.scheduleError, e.keptPrevious, e.affinityName
	slab := make([]Target, len(e.targets))
	b.Targets = make([]*Target, len(slab))
	for j, t := range e.targets {
		slab[j] = Target{Cluster: t.cluster, Replicas: t.replicas, Scheduled: t.scheduled, Suspended: t.suspended}
		b.Targets[j] = &slab[j]
	}
}

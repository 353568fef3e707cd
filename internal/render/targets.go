package render

import (
	"encoding/binary"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/schedule"
)

// renderer renders the targets of bindings with structural sharing: the
// clusters of a template that get the same replicas, the same Job
// completions and the same matching override rules (override.Candidates)
// get one object, rendered once, the very same *unstructured.Unstructured.
// Rendered objects are never changed afterwards; whatever edits one (an
// eviction stamp, a kept copy) edits a deep copy. A renderer is for one
// goroutine; its overrides are read-only.
type renderer struct {
	index     map[string]int // cluster name → position in clusters
	clusters  []*clusterv1alpha1.Cluster
	overrides func(string) []load.Override
	ip        *interpret.Interpreter
	// targets remembers, per namespace and rule, whether the rule targets
	// each cluster (ruleColumn.known).
	targets map[ruleOf][]int8
	key     []byte
	// spread renders the variants of a binding in parallel: set when
	// there are fewer bindings to render than workers.
	spread bool
}

type ruleOf struct {
	namespace string
	rule      override.RuleRef
}

func newRenderer(clusters []*clusterv1alpha1.Cluster, overrides func(string) []load.Override, ip *interpret.Interpreter) *renderer {
	r := &renderer{index: make(map[string]int, len(clusters)), clusters: clusters, overrides: overrides, ip: ip, targets: map[ruleOf][]int8{}}
	for i, c := range clusters {
		r.index[c.Name] = i
	}
	return r
}

// renderTargets builds the final object of b for each of its clusters, in
// Karmada's order: copy, revise replicas, split Job completions, cluster
// overrides then overrides, stamp, prune. A failure on one cluster leaves
// that cluster without the object and the others untouched. A frozen old
// copy (a target that has its object already) is left as it is, unless its
// cluster is no longer declared.
func (r *renderer) renderTargets(b *Binding) {
	if len(b.Targets) == 0 {
		return
	}
	overrides := r.overrides(b.Key.Namespace)
	candidates := override.Candidates(b.Template.Object, overrides)
	columns := make([]ruleColumn, len(candidates))
	for i, c := range candidates {
		columns[i] = r.column(b.Key.Namespace, c, overrides)
	}
	workload := b.Decision != nil && b.Decision.Workload
	completions := splitCompletions(b, workload)
	// Each variant is rendered once, for the first of its targets; the
	// others share its object. Should that one fail (its cluster named in
	// the failure), the next renders for itself, and so on.
	var variants []*variantOf
	index := map[string]int{}
	for _, t := range b.Targets {
		ci, ok := r.index[t.Cluster]
		if !ok {
			t.Error, t.Object = errUndeclaredCluster, nil
			continue
		}
		if t.Object != nil || t.Failure != nil {
			continue // frozen, or failed before rendering (interpret.go)
		}
		n, split := completions[t.Cluster]
		p := pendingTarget{target: t, cluster: ci, completions: n, split: split}
		key := r.variantKey(columns, ci, workload && t.Scheduled, t.Replicas, n, split)
		if b.Template.Chart != nil {
			key = fmt.Appendf(key, "\x00%p", baseObject(b, t)) // the chart's object for the cluster
		}
		if k, ok := index[string(key)]; ok {
			variants[k].targets = append(variants[k].targets, p)
			continue
		}
		index[string(key)] = len(variants)
		variants = append(variants, &variantOf{targets: []pendingTarget{p}})
	}
	render := func(p pendingTarget) {
		renderTarget(b, p.target, r.clusters[p.cluster], overrides, r.ip, workload, p.completions, p.split)
	}
	r.each(len(variants), func(k int) { render(variants[k].targets[0]) })
	for _, v := range variants {
		first := v.targets[0].target
		for _, p := range v.targets[1:] {
			if first.Object == nil {
				render(p)
				first = p.target
				continue
			}
			p.target.Object, p.target.Overrides = first.Object, first.Overrides
		}
	}
}

// variantOf is the targets of one variant, in order.
type variantOf struct {
	targets []pendingTarget
}

// pendingTarget is a target to render, with what it is rendered with
// besides the binding.
type pendingTarget struct {
	target      *Target
	cluster     int
	completions int32
	split       bool
}

// each calls f(k) for every k in [0, n): in parallel when the renderer
// spreads one binding over the workers, else in order.
func (r *renderer) each(n int, f func(int)) {
	if !r.spread || n < 2 {
		for k := range n {
			f(k)
		}
		return
	}
	parallel.For(n, func() func(int) { return f })
}

// variantKey encodes everything the object of one target depends on
// besides the binding: the replicas written, the completions, and which
// candidate override rules (columns) target the cluster.
func (r *renderer) variantKey(columns []ruleColumn, cluster int, scheduled bool, replicas, completions int32, split bool) []byte {
	key := r.key[:0]
	if scheduled {
		key = binary.AppendVarint(append(key, 1), int64(replicas))
	}
	if split {
		key = binary.AppendVarint(append(key, 2), int64(completions))
	}
	key = append(key, 0)
	for i, c := range columns {
		if i%8 == 0 {
			key = append(key, 0)
		}
		if c.targets(cluster) {
			key[len(key)-1] |= 1 << (i % 8)
		}
	}
	r.key = key
	return key
}

// ruleColumn says, per cluster, whether one rule targets it.
type ruleColumn struct {
	rule      override.RuleRef
	overrides []load.Override
	clusters  []*clusterv1alpha1.Cluster
	known     []int8 // 0 unknown, 1 yes, 2 no
}

// column returns the column of rule, shared by every template of ns: a
// rule's clusters do not depend on the template.
func (r *renderer) column(ns string, rule override.RuleRef, overrides []load.Override) ruleColumn {
	k := ruleOf{namespace: ns, rule: rule}
	known := r.targets[k]
	if known == nil {
		known = make([]int8, len(r.clusters))
		r.targets[k] = known
	}
	return ruleColumn{rule: rule, overrides: overrides, clusters: r.clusters, known: known}
}

func (c ruleColumn) targets(cluster int) bool {
	if c.known[cluster] == 0 {
		c.known[cluster] = 2
		if override.TargetsCluster(c.rule, c.overrides, c.clusters[cluster]) {
			c.known[cluster] = 1
		}
	}
	return c.known[cluster] == 1
}

// renderTarget renders b for one cluster c into t.
func renderTarget(b *Binding, t *Target, c *clusterv1alpha1.Cluster, overrides []load.Override, ip *interpret.Interpreter,
	workload bool, completions int32, split bool) {
	obj := baseObject(b, t).DeepCopy()
	var scheduled *int32
	if workload && t.Scheduled {
		revised, err := reviseReplicasOf(obj, t.Replicas, ip)
		if err != nil {
			t.Failure = interpretFailure(b, t.Cluster, err)
			t.Error = err.Error()
			return
		}
		obj = revised
		if split {
			_ = unstructured.SetNestedField(obj.Object, int64(completions), "spec", "completions")
		}
		r := t.Replicas
		scheduled = &r
	}
	res, err := override.Apply(obj, c, overrides)
	t.Overrides = &res
	if err != nil {
		t.Failure = overrideFailure(b, t.Cluster, overrides, err)
		t.Error = err.Error()
		return
	}
	if f := sealedFailure(b, t.Cluster, obj, res, overrides); f != nil {
		t.Failure, t.Error = f, f.detail()
		return
	}
	if f := reservedFailure(b, t.Cluster, obj, res, overrides); f != nil {
		t.Failure, t.Error = f, f.detail()
		return
	}
	if fe := validate(obj); fe != nil {
		t.Failure = invalidFailure(b, t.Cluster, fe)
		t.Error = t.Failure.Path + ": " + t.Failure.Message
		return
	}
	stamp(obj, b, scheduled)
	prune(obj)
	t.Object = obj
}

// errUndeclaredCluster is the Error of a target whose cluster is gone
// from Git: not a render failure, the cluster gets no Work at all.
const errUndeclaredCluster = "cluster is not declared in Git"

// reviseReplicas writes the cluster's replicas into the kind's replica field
// (Karmada's ReviseReplica): spec.replicas for Deployment, ReplicaSet and
// StatefulSet, spec.parallelism for Job.
func reviseReplicas(obj *unstructured.Unstructured, replicas int32) {
	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "ReplicaSet.apps", "StatefulSet.apps":
		_ = unstructured.SetNestedField(obj.Object, int64(replicas), "spec", "replicas")
	case "Job.batch":
		_ = unstructured.SetNestedField(obj.Object, int64(replicas), "spec", "parallelism")
	}
}

// splitCompletions divides a Divided Job's spec.completions among its
// clusters by Webster, with each cluster's parallelism as its votes.
func splitCompletions(b *Binding, workload bool) map[string]int32 {
	obj := b.Template.Object
	if !workload || obj.GroupVersionKind().GroupKind().String() != "Job.batch" || !divided(b) {
		return nil
	}
	completions, found, _ := unstructured.NestedInt64(obj.Object, "spec", "completions")
	if !found {
		return nil
	}
	var parties []schedule.Party
	for _, t := range b.Targets {
		if t.Scheduled && t.Evicted == nil {
			parties = append(parties, schedule.Party{Name: t.Cluster, Votes: int64(t.Replicas)})
		}
	}
	seats := schedule.Webster(int32(completions), parties)
	out := map[string]int32{}
	for i, p := range parties {
		out[p.Name] = seats[i]
	}
	return out
}

func divided(b *Binding) bool {
	if b.Choice.Winner == nil {
		return false
	}
	rs := b.Choice.Winner.Policy.Policy.Spec.Placement.ReplicaScheduling
	return rs != nil && rs.ReplicaSchedulingType != "Duplicated"
}

// changes lists the edits the override policies made to t's object.
func (t *Target) changes() []override.Change {
	if t.Overrides == nil {
		return nil
	}
	return t.Overrides.Changes
}

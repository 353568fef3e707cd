package schedule

// Where propagit knowingly differs from Karmada's scheduler (see
// karmada-semantics.md §4 and the doc comments of each step):
//
//   - a Cluster with a nil Status is Ready with every API enabled; its
//     capacity is unknown (0), as in Karmada;
//   - Webster ties between equal parties go to the ascending name, Karmada's
//     order for an empty template UID (Git objects have none);
//   - allocatableModelings are ignored by the estimator;
//   - there is no Fresh mode (no WorkloadRebalancer) and no
//     --enable-empty-workload-propagation: 0-replica workload clusters are
//     dropped;
//   - Steady scale-down divides by the previous replicas of the clusters that
//     are still candidates only.

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// Schedule decides where in.Template goes, following Karmada's scheduler
// (karmada-semantics.md §4): webhook defaulting of the placement, then for
// each clusterAffinities term (starting at Previous.AffinityName, never
// falling back to earlier terms) filter → score → spread selection →
// replica assignment. The first term that succeeds wins.
//
// On failure the Decision still carries the traces of every term tried, and
// the error is an *Error: NoClusterFit when the first failing term had no
// feasible cluster (the caller empties the placement), otherwise a plain
// scheduling error (the caller keeps the previous placement).
func Schedule(in Input) (Decision, error) {
	r := newRun(in)
	dec := Decision{Workload: r.workload, Replicas: r.replicas}
	if in.Interpreted != nil {
		dec.InterpretedBy = in.Interpreted.By
	}
	terms := termsOf(r.placement)
	start := 0
	if in.Previous != nil {
		start = max(0, slices.IndexFunc(terms, func(t term) bool { return t.name == in.Previous.AffinityName }))
	}
	var first *Error
	var failures []string
	for _, t := range terms[start:] {
		trace, clusters, err := r.scheduleTerm(t)
		dec.Terms = append(dec.Terms, trace)
		if err == nil {
			dec.Clusters, dec.AffinityName, dec.Steps = clusters, t.name, trace.Steps
			return dec, nil
		}
		if first == nil {
			first = err
		}
		failures = append(failures, fmt.Sprintf("%s: %s", t.name, err.Message))
	}
	if len(r.placement.ClusterAffinities) == 0 {
		return dec, first
	}
	return dec, &Error{
		NoClusterFit: first.NoClusterFit,
		Message:      "every clusterAffinities term failed: " + strings.Join(failures, "; "),
	}
}

// run is what every term of one Schedule call shares.
type run struct {
	placement   policyv1alpha1.Placement // defaulted
	strategy    strategy
	strategyErr error
	clusters    []*clusterv1alpha1.Cluster // sorted by name
	replicas    int32
	requests    corev1.ResourceList
	workload    bool
	apiVersion  string
	kind        string
	prev        map[string]int32 // previous replicas by cluster
	evicted     map[string]bool
}

func newRun(in Input) *run {
	r := &run{
		placement: withDefaults(in.Placement),
		clusters:  slices.Clone(in.Clusters),
		prev:      map[string]int32{},
		evicted:   map[string]bool{},
	}
	r.strategy, r.strategyErr = strategyOf(r.placement)
	if ip := in.Interpreted; ip != nil {
		// Karmada's workload test on what the script returned (§4.6).
		r.replicas, r.requests = ip.Replicas, ip.Requests
		r.workload = ip.Replicas > 0 || len(ip.Requests) > 0 || ip.NodeClaim
	} else {
		r.replicas, r.requests, r.workload = Replicas(in.Template)
	}
	if in.Template != nil {
		r.apiVersion, r.kind = in.Template.GetAPIVersion(), in.Template.GetKind()
	}
	slices.SortStableFunc(r.clusters, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	if in.Previous != nil {
		for _, tc := range in.Previous.Clusters {
			r.prev[tc.Name] = tc.Replicas
		}
		for _, name := range in.Previous.EvictedClusters {
			r.evicted[name] = true
		}
	}
	return r
}

// term is one clusterAffinities entry, or the single clusterAffinity (name
// "", possibly nil affinity).
type term struct {
	name     string
	affinity *policyv1alpha1.ClusterAffinity
	overflow []policyv1alpha1.OverflowAffinity
}

func termsOf(p policyv1alpha1.Placement) []term {
	if len(p.ClusterAffinities) == 0 {
		return []term{{affinity: p.ClusterAffinity}}
	}
	terms := make([]term, len(p.ClusterAffinities))
	for i := range p.ClusterAffinities {
		t := &p.ClusterAffinities[i]
		terms[i] = term{name: t.AffinityName, affinity: &t.ClusterAffinity, overflow: t.OverflowAffinities}
	}
	return terms
}

// scheduleTerm runs filter → score → select → assign for one term.
func (r *run) scheduleTerm(t term) (TermTrace, []TargetCluster, *Error) {
	trace := TermTrace{AffinityName: t.name}
	var st steps
	var feasible []candidate
	for _, c := range r.clusters {
		reason, tier := r.filter(c, t)
		if reason != "" {
			if trace.Filtered == nil {
				trace.Filtered = map[string]string{}
			}
			trace.Filtered[c.Name] = reason
			continue
		}
		feasible = append(feasible, r.candidate(c, tier))
	}
	fail := func(err *Error) (TermTrace, []TargetCluster, *Error) {
		trace.Err, trace.Steps = err.Message, st
		return trace, nil, err
	}
	if len(feasible) == 0 {
		return fail(fitError(len(r.clusters), trace.Filtered))
	}
	sortCandidates(feasible)
	st.add("candidates in order: %s", r.describe(feasible))
	selected, err := r.selectClusters(feasible, &st)
	if err != nil {
		return fail(err)
	}
	assigned, err := r.assign(selected, t, &st)
	if err != nil {
		return fail(err)
	}
	trace.Steps = st
	return trace, r.finish(assigned, &st), nil
}

// finish drops 0-replica clusters of workloads (Karmada's default without
// --enable-empty-workload-propagation) and sorts by name.
func (r *run) finish(assigned []TargetCluster, st *steps) []TargetCluster {
	var out []TargetCluster
	var dropped []string
	for _, tc := range assigned {
		if r.workload && tc.Replicas <= 0 {
			dropped = append(dropped, tc.Name)
			continue
		}
		out = append(out, tc)
	}
	slices.SortFunc(out, func(a, b TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	if len(dropped) > 0 {
		slices.Sort(dropped)
		st.add("dropped clusters with 0 replicas: %s", strings.Join(dropped, ", "))
	}
	return out
}

// fitError is Karmada's FitError: no cluster passed the filters.
func fitError(total int, filtered map[string]string) *Error {
	names := make([]string, 0, len(filtered))
	for name := range filtered {
		names = append(names, name)
	}
	slices.Sort(names)
	reasons := make([]string, len(names))
	for i, name := range names {
		reasons[i] = name + ": " + filtered[name]
	}
	msg := fmt.Sprintf("0/%d clusters are available", total)
	if len(reasons) > 0 {
		msg += ": " + strings.Join(reasons, "; ")
	}
	return &Error{NoClusterFit: true, Message: msg}
}

// steps collects the explanation of one term, in words.
type steps []string

func (s *steps) add(format string, args ...any) {
	*s = append(*s, fmt.Sprintf(format, args...))
}

// pairs renders "a=1 b=2" in the given order.
func pairs(tcs []TargetCluster) string {
	parts := make([]string, len(tcs))
	for i, tc := range tcs {
		parts[i] = fmt.Sprintf("%s=%d", tc.Name, tc.Replicas)
	}
	return strings.Join(parts, " ")
}

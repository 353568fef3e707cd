package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// localityScore is Karmada's ClusterLocality score for a cluster of the
// previous placement (ClusterAffinity always scores 0).
const localityScore = 100

// candidate is a feasible cluster with what ordering and division need.
type candidate struct {
	name    string
	cluster *clusterv1alpha1.Cluster
	score   int64
	// allocatable is the estimate of replicas that still fit (Karmada's
	// AllocatableReplicas).
	allocatable int64
	// available is allocatable plus the replicas the previous placement gave
	// this cluster (Karmada's AvailableReplicas).
	available int64
	// tier is the overflow order: 0 for the term, i for its i-th overflow
	// affinity.
	tier int
}

// candidate scores c and estimates its capacity. A non-workload gets
// MaxInt32. For a workload, an estimate of exactly MaxInt32 becomes the
// desired replicas, Karmada's guard against overflow.
func (r *run) candidate(c *clusterv1alpha1.Cluster, tier int) candidate {
	alloc := int64(math.MaxInt32)
	if r.workload {
		alloc = estimate(c, r.requests)
		if alloc == math.MaxInt32 {
			alloc = int64(r.replicas)
		}
	}
	var score int64
	prev, ok := r.prev[c.Name]
	if ok {
		score = localityScore
	}
	return candidate{
		name:        c.Name,
		cluster:     c,
		score:       score,
		allocatable: alloc,
		available:   alloc + int64(max(prev, 0)),
		tier:        tier,
	}
}

// sortCandidates puts candidates in Karmada's order: overflow tier
// ascending, score descending (previous clusters first), available replicas
// descending, name ascending.
func sortCandidates(cands []candidate) {
	slices.SortStableFunc(cands, compareCandidates)
}

func compareCandidates(a, b candidate) int {
	switch {
	case a.tier != b.tier:
		return a.tier - b.tier
	case a.score != b.score:
		return cmpDesc(a.score, b.score)
	case a.available != b.available:
		return cmpDesc(a.available, b.available)
	}
	return strings.Compare(a.name, b.name)
}

// cmpDesc orders larger values first.
func cmpDesc(a, b int64) int { return cmp.Compare(b, a) }

// describe renders the candidate list for Steps.
func (r *run) describe(cands []candidate) string {
	parts := make([]string, len(cands))
	for i, c := range cands {
		s := fmt.Sprintf("%s (score %d", c.name, c.score)
		if r.workload {
			s += fmt.Sprintf(", available %d", c.available)
		}
		if c.tier > 0 {
			s += fmt.Sprintf(", overflow tier %d", c.tier)
		}
		parts[i] = s + ")"
	}
	return strings.Join(parts, ", ")
}

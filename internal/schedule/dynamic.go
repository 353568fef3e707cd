package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// divideDynamic is Karmada's DynamicWeight and Aggregated division in Steady
// mode (§4.8.4), for desired replicas over cands (in candidate order).
// "scheduled" is the previous placement restricted to cands (by name) and
// "assigned" its sum; replicas on clusters that are no longer candidates are
// not counted, so they are placed again as a scale-up.
//
//   - assigned = desired: the scheduled list is kept;
//   - assigned > desired (scale down): weights are the scheduled replicas,
//     the target is desired, and the result replaces the scheduled list;
//   - assigned < desired (scale up, first schedule included): weights are
//     the candidates' allocatable replicas, the target is desired − assigned,
//     and the result is added to the scheduled list.
//
// Weights are sorted descending (stable, so ties keep their order; Karmada's
// sort.Sort is stable only up to 12 clusters). Aggregated then puts clusters
// with scheduled replicas first and keeps the shortest prefix whose weights
// reach the target. Webster divides the target by the weights. Fresh mode
// (an explicit WorkloadRebalancer reschedule) does not exist in propagit.
func (r *run) divideDynamic(cands []candidate, desired int32, st *steps) ([]TargetCluster, *Error) {
	scheduled, assigned := r.scheduled(cands)
	label := r.strategy.String()
	if assigned == int64(desired) {
		st.add("%s: %d replicas already assigned (%s); kept unchanged", label, assigned, pairs(scheduled))
		return scheduled, nil
	}
	var weights []Party
	var base []TargetCluster
	target := int64(desired)
	mode := "scale down"
	if assigned > int64(desired) {
		for _, tc := range scheduled {
			weights = append(weights, Party{Name: tc.Name, Votes: int64(tc.Replicas)})
		}
	} else {
		mode = "scale up"
		for _, c := range cands {
			weights = append(weights, Party{Name: c.name, Votes: c.allocatable})
		}
		base, target = scheduled, int64(desired)-assigned
	}
	slices.SortStableFunc(weights, func(a, b Party) int { return cmp.Compare(b.Votes, a.Votes) })
	var total int64
	for _, w := range weights {
		total += w.Votes
	}
	if total < target {
		return nil, &Error{Message: fmt.Sprintf(
			"clusters' available replicas %d are not enough to schedule %d replicas", total, target)}
	}
	if r.strategy == aggregated {
		weights = aggregatePrefix(weights, base, target)
	}
	seats := Webster(int32(target), weights)
	added := make([]TargetCluster, len(weights))
	for i, w := range weights {
		added[i] = TargetCluster{Name: w.Name, Replicas: seats[i]}
	}
	out := merge(base, added)
	st.add("%s, %s: divides %d replicas (desired %d, previously assigned %d) by weights %s → %s (Webster); result %s",
		label, mode, target, desired, assigned, votes(weights), pairs(added), pairs(out))
	return out, nil
}

// scheduled returns the previous placement's entries that are still
// candidates, by name, with their sum.
func (r *run) scheduled(cands []candidate) ([]TargetCluster, int64) {
	var out []TargetCluster
	var sum int64
	for _, c := range cands {
		if n, ok := r.prev[c.name]; ok {
			out = append(out, TargetCluster{Name: c.name, Replicas: n})
			sum += int64(n)
		}
	}
	slices.SortFunc(out, func(a, b TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out, sum
}

// aggregatePrefix puts the clusters that already hold replicas first (each
// part keeping its order) and cuts the list after the first prefix whose
// weights reach target.
func aggregatePrefix(weights []Party, base []TargetCluster, target int64) []Party {
	holds := map[string]bool{}
	for _, tc := range base {
		if tc.Replicas > 0 {
			holds[tc.Name] = true
		}
	}
	ordered := make([]Party, 0, len(weights))
	for _, first := range []bool{true, false} {
		for _, w := range weights {
			if holds[w.Name] == first {
				ordered = append(ordered, w)
			}
		}
	}
	var sum int64
	for i, w := range ordered {
		if sum += w.Votes; sum >= target {
			return ordered[:i+1]
		}
	}
	return ordered
}

// merge adds replicas to base, cluster by cluster, sorted by name.
func merge(base, add []TargetCluster) []TargetCluster {
	byName := map[string]int32{}
	for _, tc := range base {
		byName[tc.Name] += tc.Replicas
	}
	for _, tc := range add {
		byName[tc.Name] += tc.Replicas
	}
	out := make([]TargetCluster, 0, len(byName))
	for name, n := range byName {
		out = append(out, TargetCluster{Name: name, Replicas: n})
	}
	slices.SortFunc(out, func(a, b TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// assignTiers is overflow division (§4.8.5): candidates are grouped by
// overflow tier; each tier in turn takes min(remaining, its available
// replicas) and divides that with divideDynamic. Replicas left after the
// last tier make scheduling fail.
func (r *run) assignTiers(cands []candidate, t term, st *steps) ([]TargetCluster, *Error) {
	remaining := int64(r.replicas)
	var out []TargetCluster
	for start := 0; start < len(cands); {
		end := start
		for end < len(cands) && cands[end].tier == cands[start].tier {
			end++
		}
		tier := cands[start:end]
		take := min(remaining, sumAvailable(tier))
		st.add("overflow tier %d (%s): takes %d of %d remaining replicas (available %d)",
			tier[0].tier, tierName(t, tier[0].tier), take, remaining, sumAvailable(tier))
		res, err := r.divideDynamic(tier, int32(take), st)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		remaining -= take
		start = end
	}
	if remaining > 0 {
		return nil, &Error{Message: fmt.Sprintf("%d replicas left after the last overflow tier", remaining)}
	}
	return out, nil
}

func tierName(t term, tier int) string {
	if tier == 0 {
		return t.name
	}
	return t.overflow[tier-1].AffinityName
}

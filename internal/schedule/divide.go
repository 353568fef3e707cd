package schedule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/match"
)

// assign divides the replicas among the selected candidates (§4.8).
// Non-workloads get every candidate with 0 replicas whatever the strategy.
func (r *run) assign(cands []candidate, t term, st *steps) ([]TargetCluster, *Error) {
	if !r.workload {
		st.add("not a workload (no replicas, no per-replica requirements): every candidate gets 0 replicas")
		return zeroes(cands), nil
	}
	if r.strategyErr != nil {
		return nil, &Error{Message: r.strategyErr.Error()}
	}
	switch r.strategy {
	case duplicated:
		out := make([]TargetCluster, len(cands))
		for i, c := range cands {
			out[i] = TargetCluster{Name: c.name, Replicas: r.replicas}
		}
		st.add("Duplicated: every selected cluster gets %d replicas", r.replicas)
		return out, nil
	case staticWeight:
		return r.assignStatic(cands, st), nil
	}
	if len(t.overflow) > 0 {
		return r.assignTiers(cands, t, st)
	}
	return r.divideDynamic(cands, r.replicas, st)
}

func zeroes(cands []candidate) []TargetCluster {
	out := make([]TargetCluster, len(cands))
	for i, c := range cands {
		out[i] = TargetCluster{Name: c.name}
	}
	return out
}

// assignStatic is Karmada's static weight division (§4.8.3): a cluster's
// weight is the largest weight of the staticWeightList entries matching it;
// clusters matching none get nothing; if nothing matches (or there is no
// weightPreference) every candidate weighs 1. Webster divides the replicas
// with no initial seats, so neither the previous placement nor capacity
// matters.
func (r *run) assignStatic(cands []candidate, st *steps) []TargetCluster {
	byName := slices.Clone(cands)
	slices.SortFunc(byName, func(a, b candidate) int { return strings.Compare(a.name, b.name) })
	var parties []Party
	var unweighted []string
	if wp := r.placement.ReplicaScheduling.WeightPreference; wp != nil {
		for _, c := range byName {
			var w int64
			for i := range wp.StaticWeightList {
				e := &wp.StaticWeightList[i]
				if e.Weight > w && match.Cluster(&e.TargetCluster, c.cluster) {
					w = e.Weight
				}
			}
			if w > 0 {
				parties = append(parties, Party{Name: c.name, Votes: w})
			} else {
				unweighted = append(unweighted, c.name)
			}
		}
	}
	note := ""
	if len(parties) == 0 {
		note = " (no weightPreference: equal weights)"
		if r.placement.ReplicaScheduling.WeightPreference != nil {
			note = " (no staticWeightList entry matches: equal weights)"
		}
		parties, unweighted = nil, nil
		for _, c := range byName {
			parties = append(parties, Party{Name: c.name, Votes: 1})
		}
	}
	seats := Webster(r.replicas, parties)
	out := make([]TargetCluster, len(parties))
	for i, p := range parties {
		out[i] = TargetCluster{Name: p.Name, Replicas: seats[i]}
	}
	st.add("%s: weights %s%s; %d replicas → %s (Webster)", staticWeight, votes(parties), note, r.replicas, pairs(out))
	if len(unweighted) > 0 {
		st.add("no staticWeightList entry matches %s: no replicas", strings.Join(unweighted, ", "))
	}
	return out
}

// votes renders "a=2 b=1" in the given order.
func votes(parties []Party) string {
	parts := make([]string, len(parties))
	for i, p := range parties {
		parts[i] = fmt.Sprintf("%s=%d", p.Name, p.Votes)
	}
	return strings.Join(parts, " ")
}

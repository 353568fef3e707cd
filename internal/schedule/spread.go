package schedule

import (
	"fmt"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// selectClusters applies the spread constraints (§4.5) to the sorted
// candidates and returns the selected ones in order. Without constraints, or
// with static weights, every candidate is selected. Selection is implemented
// for region and cluster only, as in Karmada: a region constraint runs region
// selection, else a cluster constraint runs cluster selection, else
// scheduling fails (spreadByLabel, or zone/provider alone).
func (r *run) selectClusters(cands []candidate, st *steps) ([]candidate, *Error) {
	p := r.placement
	if len(p.SpreadConstraints) == 0 {
		return cands, nil
	}
	if ignoresSpread(p) {
		st.add("spreadConstraints ignored: static weights select every feasible cluster (Karmada #3184)")
		return cands, nil
	}
	byField := map[string]policyv1alpha1.SpreadConstraint{}
	for _, sc := range p.SpreadConstraints {
		byField[sc.SpreadByField] = sc
	}
	var (
		out []candidate
		err *Error
	)
	if region, ok := byField[policyv1alpha1.SpreadByRegion]; ok {
		out, err = r.selectByRegion(cands, region, byField[policyv1alpha1.SpreadByCluster])
	} else if cluster, ok := byField[policyv1alpha1.SpreadByCluster]; ok {
		need := int64(r.replicas)
		if ignoresCapacity(p) {
			need = -1
		}
		out, err = selectByCluster(cands, cluster, need)
	} else {
		err = &Error{Message: "spreadConstraints: only spreadByField cluster and region select clusters (spreadByLabel is not implemented)"}
	}
	if err != nil {
		return nil, err
	}
	st.add("spreadConstraints selected: %s", names(out))
	return out, nil
}

// selectByCluster takes the first min(#candidates, maxGroups) candidates. If
// need ≥ 0 and their available replicas sum to less than need, it walks the
// chosen list from the end, swapping each for the remaining candidate with
// the most available replicas when that is strictly more. An unset maxGroups
// (0) selects nothing, which fails (Karmada PR #4617 was never merged).
func selectByCluster(cands []candidate, sc policyv1alpha1.SpreadConstraint, need int64) ([]candidate, *Error) {
	if len(cands) < sc.MinGroups {
		return nil, &Error{Message: fmt.Sprintf(
			"spreadConstraints: %d feasible clusters, fewer than cluster minGroups %d", len(cands), sc.MinGroups)}
	}
	n := max(0, min(len(cands), sc.MaxGroups))
	chosen := append([]candidate(nil), cands[:n]...)
	if need < 0 {
		if n == 0 {
			return nil, &Error{Message: "spreadConstraints: cluster maxGroups is 0 (unset), so no cluster is selected"}
		}
		return chosen, nil
	}
	rest := append([]candidate(nil), cands[n:]...)
	for i := n - 1; i >= 0 && sumAvailable(chosen) < need; i-- {
		best := -1
		most := chosen[i].available
		for j := range rest {
			if rest[j].available > most {
				best, most = j, rest[j].available
			}
		}
		if best >= 0 {
			chosen[i], rest[best] = rest[best], chosen[i]
		}
	}
	if n == 0 || sumAvailable(chosen) < need {
		return nil, &Error{Message: fmt.Sprintf(
			"spreadConstraints: not enough available replicas for %d replicas when selecting %d clusters", need, n)}
	}
	return chosen, nil
}

func sumAvailable(cands []candidate) int64 {
	var sum int64
	for _, c := range cands {
		sum += c.available
	}
	return sum
}

func names(cands []candidate) string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.name
	}
	return strings.Join(out, ", ")
}

package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// groupScoreUnit makes the replica term of a group score dominate the
// cluster-score term.
const groupScoreUnit = 1000

// selectByRegion is Karmada's region selection: choose regions with a DFS
// (selectGroups), take the first candidate of each chosen region, then fill
// up to cluster maxGroups with the other clusters of those regions in
// candidate order. An unset cluster constraint means one cluster per region.
func (r *run) selectByRegion(cands []candidate, region, cluster policyv1alpha1.SpreadConstraint) ([]candidate, *Error) {
	byRegion := map[string][]candidate{}
	var regions []string
	for _, c := range cands {
		name := c.cluster.Spec.Region
		if _, ok := byRegion[name]; !ok {
			regions = append(regions, name)
		}
		byRegion[name] = append(byRegion[name], c)
	}
	if len(regions) < region.MinGroups {
		return nil, &Error{Message: fmt.Sprintf(
			"spreadConstraints: %d feasible regions, fewer than region minGroups %d", len(regions), region.MinGroups)}
	}
	groups := make([]group, len(regions))
	for i, name := range regions {
		groups[i] = group{
			name:   name,
			value:  int64(len(byRegion[name])),
			weight: r.groupScore(byRegion[name], region.MinGroups, cluster.MinGroups),
		}
	}
	chosen := selectGroups(groups, region.MinGroups, region.MaxGroups, int64(cluster.MinGroups))
	if len(chosen) == 0 {
		return nil, &Error{Message: fmt.Sprintf(
			"spreadConstraints: no set of %d..%d regions holds at least %d clusters",
			region.MinGroups, region.MaxGroups, cluster.MinGroups)}
	}
	var out, rest []candidate
	for _, g := range chosen {
		out = append(out, byRegion[g.name][0])
		rest = append(rest, byRegion[g.name][1:]...)
	}
	if extra := min(len(out)+len(rest), cluster.MaxGroups) - len(out); extra > 0 {
		sortCandidates(rest)
		out = append(out, rest[:extra]...)
	}
	return out, nil
}

// groupScore is Karmada's score of one group of clusters (in candidate
// order). Duplicated: valid·1000 + the average score of the valid clusters,
// where valid means available ≥ replicas. Divided: target =
// ceil(replicas/groupMin), need = max(clusterMin, groupMin); clusters are
// accumulated until count ≥ need and available ≥ target; the score is
// target·1000 + sumScore/count, or sumAvailable·1000 + sumScore/len(group)
// when the target is not reached.
func (r *run) groupScore(cands []candidate, groupMin, clusterMin int) int64 {
	replicas := int64(r.replicas)
	if ignoresCapacity(r.placement) {
		var valid, sum int64
		for _, c := range cands {
			if c.available >= replicas {
				valid++
				sum += c.score
			}
		}
		if valid == 0 {
			return 0
		}
		return valid*groupScoreUnit + sum/valid
	}
	groupMin = max(groupMin, 1)
	target := (replicas + int64(groupMin) - 1) / int64(groupMin)
	need := max(clusterMin, groupMin)
	var sumAvail, sumScore, count int64
	for _, c := range cands {
		sumAvail += c.available
		sumScore += c.score
		count++
		if count >= int64(need) && sumAvail >= target {
			break
		}
	}
	if sumAvail < target {
		return sumAvail*groupScoreUnit + sumScore/int64(len(cands))
	}
	return target*groupScoreUnit + sumScore/count
}

// group is one region in the DFS: value is its cluster count, weight its
// score.
type group struct {
	name   string
	value  int64
	weight int64
}

// path is one feasible set of groups, found in DFS order id.
type path struct {
	id     int
	groups []group
	value  int64
	weight int64
}

// selectGroups returns the best feasible set of groups: between minGroups
// and maxGroups groups whose values sum to at least target. Groups are
// explored in (value ascending, weight descending, name ascending) order and
// a path stops growing once feasible. The best path has the highest weight,
// then value, then the earliest id; a feasible strict prefix of it (groups
// ordered by weight descending, name ascending) is preferred.
func selectGroups(groups []group, minGroups, maxGroups int, target int64) []group {
	paths := feasiblePaths(groups, minGroups, maxGroups, target)
	if len(paths) == 0 {
		return nil
	}
	slices.SortFunc(paths, func(a, b path) int {
		switch {
		case a.weight != b.weight:
			return cmpDesc(a.weight, b.weight)
		case a.value != b.value:
			return cmpDesc(a.value, b.value)
		}
		return a.id - b.id
	})
	best := paths[0]
	for _, p := range paths[1:] {
		if isStrictPrefix(p.groups, best.groups) {
			best = p
		}
	}
	return best.groups
}

func feasiblePaths(groups []group, minGroups, maxGroups int, target int64) []path {
	sorted := slices.Clone(groups)
	slices.SortFunc(sorted, func(a, b group) int {
		switch {
		case a.value != b.value:
			return cmp.Compare(a.value, b.value)
		case a.weight != b.weight:
			return cmpDesc(a.weight, b.weight)
		}
		return strings.Compare(a.name, b.name)
	})
	var paths []path
	var cur []group
	var walk func(sum int64, begin int)
	walk = func(sum int64, begin int) {
		if sum >= target && len(cur) >= minGroups && len(cur) <= maxGroups {
			paths = append(paths, newPath(len(paths), cur))
			return
		}
		if len(cur) >= maxGroups {
			return
		}
		for i := begin; i < len(sorted); i++ {
			cur = append(cur, sorted[i])
			walk(sum+sorted[i].value, i+1)
			cur = cur[:len(cur)-1]
		}
	}
	walk(0, 0)
	return paths
}

func newPath(id int, groups []group) path {
	p := path{id: id, groups: slices.Clone(groups)}
	for _, g := range p.groups {
		p.value += g.value
		p.weight += g.weight
	}
	slices.SortFunc(p.groups, func(a, b group) int {
		if a.weight != b.weight {
			return cmpDesc(a.weight, b.weight)
		}
		return strings.Compare(a.name, b.name)
	})
	return p
}

func isStrictPrefix(prefix, of []group) bool {
	if len(prefix) >= len(of) {
		return false
	}
	for i := range prefix {
		if prefix[i].name != of[i].name {
			return false
		}
	}
	return true
}

package render

import (
	"fmt"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// lintClusterNames flags cluster names in policies that name no Cluster,
// each at the line of the misspelled entry.
func lintClusterNames(set *load.Set, loc *locator) []Finding {
	known := map[string]bool{}
	var names []string
	for _, c := range set.Clusters {
		known[c.Cluster.Name] = true
		names = append(names, c.Cluster.Name)
	}
	var out []Finding
	check := func(src load.Source, policy, field string, clusters []string) {
		for i, n := range clusters {
			if known[n] {
				continue
			}
			hint := ""
			if m := load.Closest(n, names); m != "" {
				hint = fmt.Sprintf("; did you mean %q?", m)
			}
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleUnknownCluster, Finding: load.Finding{
				Source:  loc.at(src, fmt.Sprintf("spec.%s[%d]", field, i)),
				Message: fmt.Sprintf("%s: %s names cluster %q, which no Cluster declares%s", policy, field, n, hint)}})
		}
	}
	affinity := func(src load.Source, policy, field string, a *policyv1alpha1.ClusterAffinity) {
		if a != nil {
			check(src, policy, field+".clusterNames", a.ClusterNames)
			check(src, policy, field+".exclude", a.ExcludeClusters)
		}
	}
	for _, p := range set.Propagations {
		name := p.Display()
		pl := p.Policy.Spec.Placement
		affinity(p.Source, name, "placement.clusterAffinity", pl.ClusterAffinity)
		for i := range pl.ClusterAffinities {
			affinity(p.Source, name, fmt.Sprintf("placement.clusterAffinities[%d]", i), &pl.ClusterAffinities[i].ClusterAffinity)
		}
		if pl.ReplicaScheduling != nil && pl.ReplicaScheduling.WeightPreference != nil {
			for i := range pl.ReplicaScheduling.WeightPreference.StaticWeightList {
				affinity(p.Source, name, fmt.Sprintf("placement.replicaScheduling.weightPreference.staticWeightList[%d].targetCluster", i),
					&pl.ReplicaScheduling.WeightPreference.StaticWeightList[i].TargetCluster)
			}
		}
	}
	for _, o := range set.Overrides {
		name := o.Display()
		affinity(o.Source, name, "targetCluster", o.Policy.Spec.TargetCluster)
		for i := range o.Policy.Spec.OverrideRules {
			affinity(o.Source, name, fmt.Sprintf("overrideRules[%d].targetCluster", i), o.Policy.Spec.OverrideRules[i].TargetCluster)
		}
	}
	return out
}

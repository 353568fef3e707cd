package override

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
)

// RuleRef names one override rule: the policy by its position in the
// policies given, the rule by its index in spec.overrideRules (0 for the
// deprecated spec.targetCluster/spec.overriders form).
type RuleRef struct{ Policy, Rule int }

// Candidates returns the rules of policies whose policy may apply to obj on
// some cluster, in policy then rule order, without applying anything: the
// ClusterOverridePolicies that select obj and, when obj is namespaced, the
// OverridePolicies of its namespace that select it. Apply matches the
// OverridePolicies against obj as the ClusterOverridePolicies leave it
// (they may edit its labels, even its namespace), which only applying
// tells; so when a ClusterOverridePolicy selects obj, every OverridePolicy
// given is a candidate. Candidates is thus
// a superset of what Apply applies, and which of them target a cluster
// (TargetsCluster) is all Apply reads of the cluster: two clusters for
// which the same candidates match get the same object from the same input.
func Candidates(obj *unstructured.Unstructured, policies []load.Override) []RuleRef {
	selects := func(p load.Override) bool {
		return len(p.Policy.Spec.ResourceSelectors) == 0 || match.Selectors(p.Policy.Spec.ResourceSelectors, obj) != match.None
	}
	var out []RuleRef
	clusterWide := false
	for i, p := range policies {
		if p.Policy != nil && p.ClusterScoped && selects(p) {
			clusterWide = true
			out = appendRules(out, i, p)
		}
	}
	if obj.GetNamespace() == "" && !clusterWide {
		return out
	}
	for i, p := range policies {
		if p.Policy != nil && !p.ClusterScoped && (clusterWide || p.Policy.Namespace == obj.GetNamespace() && selects(p)) {
			out = appendRules(out, i, p)
		}
	}
	return out
}

func appendRules(out []RuleRef, i int, p load.Override) []RuleRef {
	for _, r := range rules(p.Policy.Spec) {
		out = append(out, RuleRef{Policy: i, Rule: r.index})
	}
	return out
}

// TargetsCluster reports whether rule r of policies targets cluster.
func TargetsCluster(r RuleRef, policies []load.Override, cluster *clusterv1alpha1.Cluster) bool {
	spec := policies[r.Policy].Policy.Spec
	target := spec.TargetCluster // the deprecated form: one rule
	if len(spec.OverrideRules) > 0 {
		target = spec.OverrideRules[r.Rule].TargetCluster
	}
	return match.Cluster(target, cluster)
}

// Matching returns the candidate rules of obj (Candidates) that target
// cluster: which override rules match this template on this cluster, with
// no object edited.
func Matching(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies []load.Override) []RuleRef {
	var out []RuleRef
	for _, r := range Candidates(obj, policies) {
		if TargetsCluster(r, policies, cluster) {
			out = append(out, r)
		}
	}
	return out
}

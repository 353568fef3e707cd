package render

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
)

// applyTaintPolicies sets on c the taints of every ClusterTaintPolicy that
// targets it, as Karmada's taint controller would for its current
// conditions: policy by policy (by name: Git has no creation order), a
// policy's taints are added when every addOnCondition matches and removed
// when every removeOnCondition matches. A taint counts as present when its
// key and effect match. An added taint is dated from the newest transition
// of the conditions that added it, which NoExecute tolerationSeconds count
// from.
//
// Karmada keeps a taint on the Cluster object until removeOnConditions
// match; propagit renders from the current conditions alone, so a taint
// lasts while addOnConditions match. With complementary conditions (the
// usual NotIn/In pair) the two agree.
func applyTaintPolicies(c *clusterv1alpha1.Cluster, policies []load.TaintPolicy) {
	if len(policies) == 0 {
		return
	}
	sorted := slices.Clone(policies)
	slices.SortFunc(sorted, func(a, b load.TaintPolicy) int { return strings.Compare(a.Policy.Name, b.Policy.Name) })
	var conds []metav1.Condition
	if c.Status != nil {
		conds = c.Status.Conditions
	}
	taints := slices.Clone(c.Spec.Taints)
	for _, tp := range sorted {
		spec := tp.Policy.Spec
		if spec.TargetClusters != nil && !match.Cluster(spec.TargetClusters, c) {
			continue
		}
		if since, ok := conditionsMatch(conds, spec.AddOnConditions); ok {
			for _, t := range spec.Taints {
				if !slices.ContainsFunc(taints, sameTaint(t)) {
					added := metav1.NewTime(since)
					taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: &added})
				}
			}
		}
		if _, ok := conditionsMatch(conds, spec.RemoveOnConditions); ok {
			for _, t := range spec.Taints {
				if i := slices.IndexFunc(taints, sameTaint(t)); i >= 0 {
					taints = slices.Delete(taints, i, i+1)
				}
			}
		}
	}
	c.Spec.Taints = taints
}

func sameTaint(t policyv1alpha1.Taint) func(corev1.Taint) bool {
	return func(ct corev1.Taint) bool { return ct.Key == t.Key && ct.Effect == t.Effect }
}

// conditionsMatch reports whether every match condition holds (an empty
// list never does), and the newest transition time among the conditions
// it looked at. A condition type the cluster does not report matches
// neither In nor NotIn, as in Karmada.
func conditionsMatch(conds []metav1.Condition, mcs []policyv1alpha1.MatchCondition) (since time.Time, ok bool) {
	if len(mcs) == 0 {
		return since, false
	}
	for _, mc := range mcs {
		i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == mc.ConditionType })
		if i < 0 {
			return since, false
		}
		in := slices.Contains(mc.StatusValues, conds[i].Status)
		if in != (mc.Operator == policyv1alpha1.MatchIn) {
			return since, false
		}
		if t := conds[i].LastTransitionTime.Time; t.After(since) {
			since = t
		}
	}
	return since, true
}

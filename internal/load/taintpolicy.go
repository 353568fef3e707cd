package load

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// TaintPolicy is a ClusterTaintPolicy.
type TaintPolicy struct {
	Policy *policyv1alpha1.ClusterTaintPolicy
	Source Source
}

// taintPolicy decodes a ClusterTaintPolicy.
func (c *collector) taintPolicy(di docInfo, n *yaml.Node) {
	p := &policyv1alpha1.ClusterTaintPolicy{}
	d := decodeStrict(n, p, "")
	semantic := policyMeta(&p.ObjectMeta, true)
	semantic = append(semantic, validateTaintPolicy(p)...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(policyv1alpha1.Group, p.Kind, "", p.Name))) {
		c.set.TaintPolicies = append(c.set.TaintPolicies, TaintPolicy{Policy: p, Source: di.src})
	}
}

// validateTaintPolicy checks what Karmada's CRD schema and webhook check:
// at least one taint, each with a key and an effect, no two with the same
// key and effect, and match conditions with a type, an operator and status
// values. Karmada accepts any operator, status or effect string and then
// never matches or never acts on it: those are warnings here.
func validateTaintPolicy(p *policyv1alpha1.ClusterTaintPolicy) []issue {
	c := &checker{}
	if p.Spec.TargetClusters != nil {
		c.clusterAffinity("spec.targetClusters", p.Spec.TargetClusters)
	}
	for _, list := range []struct {
		path  string
		conds []policyv1alpha1.MatchCondition
	}{{"spec.addOnConditions", p.Spec.AddOnConditions}, {"spec.removeOnConditions", p.Spec.RemoveOnConditions}} {
		for i, mc := range list.conds {
			path := indexPath(list.path, i)
			c.required(path+".conditionType", mc.ConditionType)
			if c.required(path+".operator", mc.Operator) {
				c.known(path+".operator", mc.Operator, "the condition never matches", policyv1alpha1.MatchIn, policyv1alpha1.MatchNotIn)
			}
			if len(mc.StatusValues) == 0 {
				c.add(path+".statusValues", "is required")
			}
			for j, v := range mc.StatusValues {
				c.known(indexPath(path+".statusValues", j), string(v), "no condition has this status", string(metav1.ConditionTrue), string(metav1.ConditionFalse), string(metav1.ConditionUnknown))
			}
		}
	}
	if len(p.Spec.Taints) == 0 {
		c.add("spec.taints", "needs at least one taint")
	}
	seen := map[string]bool{}
	for i, t := range p.Spec.Taints {
		path := indexPath("spec.taints", i)
		if c.required(path+".key", t.Key) {
			c.labelKey(path+".key", t.Key)
		}
		if t.Value != "" {
			c.labelValue(path+".value", t.Value)
		}
		if c.required(path+".effect", string(t.Effect)) {
			c.known(path+".effect", string(t.Effect), "neither scheduling nor failover acts on it", string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute))
		}
		id := fmt.Sprintf("%s:%s", t.Key, t.Effect)
		if seen[id] {
			c.add(path, "duplicate taint with key %q and effect %s", t.Key, t.Effect)
		}
		seen[id] = true
	}
	return c.issues
}

// known warns when value is none of allowed, saying what follows.
func (c *checker) known(field, value, consequence string, allowed ...string) {
	if !slices.Contains(allowed, value) {
		c.warn(field, "%q is not one of %s: %s", value, strings.Join(allowed, ", "), consequence)
	}
}

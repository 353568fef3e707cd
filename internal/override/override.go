package override

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
)

// Result is what Apply did to one object for one cluster.
type Result struct {
	// ClusterOverrides lists every applied ClusterOverridePolicy rule, sorted
	// by policy name: the value of the Work annotation
	// policy.karmada.io/applied-cluster-overrides.
	ClusterOverrides []Applied
	// Overrides lists every applied OverridePolicy rule, sorted by policy
	// name: the value of policy.karmada.io/applied-overrides.
	Overrides []Applied
	// Changes lists every edit in the order it was applied.
	Changes []Change
}

// Applied is one applied rule as Karmada records it on the Work. A policy
// with two matching rules appears twice.
type Applied struct {
	PolicyName string                    `json:"policyName"`
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Change is one edit made by one overrider.
type Change struct {
	// Policy names the policy as messages do (load.Override.Display).
	Policy string `json:"policy"`
	// Rule is the index in spec.overrideRules; 0 for the deprecated
	// spec.targetCluster/spec.overriders form.
	Rule int `json:"rule"`
	// Overrider is the overrider's field name: "imageOverrider",
	// "commandOverrider", "argsOverrider", "labelsOverrider",
	// "annotationsOverrider", "fieldOverrider" or "plaintext".
	Overrider string `json:"overrider"`
	// Path is the JSON pointer written in the object.
	Path string `json:"path"`
	// Before and After are the compact JSON at Path, "" when absent.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// String renders the change on one line for explain.
func (c Change) String() string {
	return fmt.Sprintf("%s rule %d %s %s: %s -> %s",
		c.Policy, c.Rule, c.Overrider, c.Path, orAbsent(c.Before), orAbsent(c.After))
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// RuleError is the error Apply returns when an overrider fails. Karmada then
// renders nothing for the object on that cluster.
type RuleError struct {
	// Policy names the policy as messages do (load.Override.Display).
	Policy string
	// Source is where the policy was declared.
	Source load.Source
	// Rule is the index in spec.overrideRules (0 for the deprecated form).
	Rule int
	// Field locates the failing overrider in the policy spec, for example
	// "overrideRules[0].overriders.imageOverrider[1]".
	Field string
	// Err is the cause.
	Err error
}

// Error renders "Policy: Field: cause".
func (e *RuleError) Error() string { return e.Policy + ": " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RuleError) Unwrap() error { return e.Err }

// Apply applies to obj, for cluster, every matching ClusterOverridePolicy
// then, if obj is namespaced, every matching OverridePolicy of obj's
// namespace, in Karmada's order. obj is modified in place (the caller passes a
// deep copy). cluster must not be nil.
//
// Any failing overrider stops Apply with a *RuleError; obj is then partly
// edited and the Result holds the edits made before the failure.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies []load.Override) (Result, error) {
	e := &editor{obj: obj}
	var res Result
	var err error
	res.ClusterOverrides, res.Overrides, err = e.run(cluster, policies)
	for _, ed := range e.edits {
		res.Changes = append(res.Changes, ed.Change)
	}
	return res, err
}

// run applies the ClusterOverridePolicies, then the OverridePolicies. Each
// set is matched against the object as the previous set left it, as in
// Karmada: a label added by a ClusterOverridePolicy can make an
// OverridePolicy's labelSelector match.
func (e *editor) run(cluster *clusterv1alpha1.Cluster, policies []load.Override) (cops, ops []Applied, err error) {
	cops, err = e.applyAll(ordered(policies, e.obj, true), cluster)
	if err != nil || e.obj.GetNamespace() == "" {
		return cops, nil, err
	}
	ops, err = e.applyAll(ordered(policies, e.obj, false), cluster)
	return cops, ops, err
}

// applyAll applies the matching rules of policies, in order, and returns
// them sorted by policy name.
func (e *editor) applyAll(policies []load.Override, cluster *clusterv1alpha1.Cluster) ([]Applied, error) {
	var applied []Applied
	for _, p := range policies {
		for _, r := range rules(p.Policy.Spec) {
			if !match.Cluster(r.targetCluster, cluster) {
				continue
			}
			if err := e.applyRule(p, r); err != nil {
				return nil, err
			}
			applied = append(applied, Applied{PolicyName: p.Policy.Name, Overriders: r.overriders})
		}
	}
	slices.SortStableFunc(applied, func(a, b Applied) int { return cmp.Compare(a.PolicyName, b.PolicyName) })
	return applied, nil
}

// ordered returns the ClusterOverridePolicies (clusterScoped) or the
// OverridePolicies of obj's namespace that select obj, from the least to the
// most specific match, ties broken by name.
func ordered(policies []load.Override, obj *unstructured.Unstructured, clusterScoped bool) []load.Override {
	type candidate struct {
		policy   load.Override
		priority match.Priority
	}
	var found []candidate
	for _, p := range policies {
		if p.Policy == nil || p.ClusterScoped != clusterScoped {
			continue
		}
		sels := p.Policy.Spec.ResourceSelectors
		// An OverridePolicy's empty selector namespace means its own, which
		// is obj's here, so no defaulting copy is needed to match.
		if !clusterScoped && p.Policy.Namespace != obj.GetNamespace() {
			continue
		}
		priority := match.MatchAll
		if len(sels) > 0 {
			if priority = match.Selectors(sels, obj); priority == match.None {
				continue
			}
		}
		found = append(found, candidate{policy: p, priority: priority})
	}
	slices.SortStableFunc(found, func(a, b candidate) int {
		if c := cmp.Compare(a.priority, b.priority); c != 0 {
			return c
		}
		return cmp.Compare(a.policy.Policy.Name, b.policy.Policy.Name)
	})
	out := make([]load.Override, len(found))
	for i, c := range found {
		out[i] = c.policy
	}
	return out
}

// rule is one override rule of a policy.
type rule struct {
	index         int
	field         string // "overrideRules[i].overriders" or "overriders"
	targetCluster *policyv1alpha1.ClusterAffinity
	overriders    policyv1alpha1.Overriders
}

// rules lists spec.overrideRules, or the deprecated top-level
// targetCluster and overriders when overrideRules is empty.
func rules(spec policyv1alpha1.OverrideSpec) []rule {
	if len(spec.OverrideRules) == 0 {
		r := rule{field: "overriders", targetCluster: spec.TargetCluster}
		if spec.Overriders != nil {
			r.overriders = *spec.Overriders
		}
		return []rule{r}
	}
	out := make([]rule, len(spec.OverrideRules))
	for i, r := range spec.OverrideRules {
		out[i] = rule{
			index:         i,
			field:         fmt.Sprintf("overrideRules[%d].overriders", i),
			targetCluster: r.TargetCluster,
			overriders:    r.Overriders,
		}
	}
	return out
}

package load

import (
	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/restrict"
)

// admit holds every policy, override, interpreter customization, Cluster
// and ClusterTaintPolicy to the
// folder rules of the restriction policy (Options.Restrictions): a team
// that may deploy only to its own namespaces may not change another
// team's templates through a policy either. A refused declaration is a
// Problem at its file and line, so the revision does not load and every
// member keeps the last good one, as with any invalid policy.
func (c *collector) admit() {
	p := c.restrictions()
	if p == nil {
		return
	}
	check := func(src Source, d restrict.Declaration) {
		d.Source = src.Path
		if r := p.Admit(d); r != nil {
			c.problems = append(c.problems, problemf(src, r.Path, "refused by the restriction policy (%s): %s", r.Rule, r.Message))
		}
	}
	for _, pp := range c.set.Propagations {
		kind := "PropagationPolicy"
		if pp.ClusterScoped {
			kind = "ClusterPropagationPolicy"
		}
		check(pp.Source, restrict.Declaration{Kind: kind, Group: "policy.karmada.io", Namespace: pp.Policy.Namespace, Name: pp.Policy.Name})
	}
	for _, op := range c.set.Overrides {
		kind := "OverridePolicy"
		if op.ClusterScoped {
			kind = "ClusterOverridePolicy"
		}
		check(op.Source, restrict.Declaration{Kind: kind, Group: "policy.karmada.io", Namespace: op.Policy.Namespace, Name: op.Policy.Name})
	}
	for _, cl := range c.set.Clusters {
		check(cl.Source, restrict.Declaration{Kind: "Cluster", Group: "cluster.karmada.io", Name: cl.Cluster.Name})
	}
	for _, tp := range c.set.TaintPolicies {
		check(tp.Source, restrict.Declaration{Kind: "ClusterTaintPolicy", Group: "policy.karmada.io", Name: tp.Policy.Name})
	}
	for _, ro := range c.set.Rollouts {
		check(ro.Source, restrict.Declaration{Kind: rolloutv1alpha1.Kind, Group: rolloutv1alpha1.Group, Namespace: ro.Policy.Namespace, Name: ro.Policy.Name})
	}
	for _, cu := range c.set.Customizations {
		check(cu.Source, restrict.Declaration{Kind: "ResourceInterpreterCustomization", Group: "config.karmada.io", Name: cu.Customization.Name})
	}
}

// restrictions is the restriction policy the load was given, if any.
func (c *collector) restrictions() *restrict.Policy {
	if c.budget == nil {
		return nil
	}
	return c.budget.opts.Restrictions
}

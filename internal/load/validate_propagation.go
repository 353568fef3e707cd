package load

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// validatePropagation applies the checks of Karmada's PropagationPolicy and
// ClusterPropagationPolicy webhooks (semantics §1.2). The policy namespace
// has already been defaulted.
func validatePropagation(p *policyv1alpha1.PropagationPolicy, clusterScoped bool) []issue {
	c := &checker{}
	s := &p.Spec
	if len(s.ResourceSelectors) == 0 {
		c.missing("spec.resourceSelectors", "spec.resourceSelectors", "required: list at least one resource selector")
	}
	for i, rs := range s.ResourceSelectors {
		path := indexPath("spec.resourceSelectors", i)
		c.resourceSelector(path, rs)
		if !clusterScoped && rs.Namespace != "" && rs.Namespace != p.Namespace {
			c.add(path+".namespace", "%q differs from the policy's namespace %q: a PropagationPolicy only selects resources in its own namespace", rs.Namespace, p.Namespace)
		}
		if s.Preemption == "Always" && rs.Name == "" {
			c.add(path+".name", "required when preemption is Always")
		}
	}
	c.oneOf("spec.preemption", s.Preemption, "Always", "Never")
	c.oneOf("spec.conflictResolution", s.ConflictResolution, policyv1alpha1.ConflictAbort, policyv1alpha1.ConflictOverwrite)
	c.oneOf("spec.activationPreference", s.ActivationPreference, "Lazy")
	for i, name := range s.DependentOverrides {
		c.required(indexPath("spec.dependentOverrides", i), name)
	}
	c.placement("spec.placement", &s.Placement)
	c.failover("spec.failover", s)
	if sp := s.Suspension; sp != nil && sp.Dispatching != nil && *sp.Dispatching &&
		sp.DispatchingOnClusters != nil && len(sp.DispatchingOnClusters.ClusterNames) > 0 {
		c.add("spec.suspension.dispatchingOnClusters", "cannot be set when dispatching is true")
	}
	if sp := s.SchedulePriority; sp != nil {
		c.oneOf("spec.schedulePriority.priorityClassSource", sp.PriorityClassSource, "KubePriorityClass")
		c.required("spec.schedulePriority.priorityClassName", sp.PriorityClassName)
	}
	return c.issues
}

// placement checks affinities, tolerations, spread constraints and replica
// scheduling.
func (c *checker) placement(path string, pl *policyv1alpha1.Placement) {
	if pl.ClusterAffinity != nil && pl.ClusterAffinities != nil {
		c.add(path+".clusterAffinities", "cannot be set together with clusterAffinity: use one of them")
	}
	c.clusterAffinity(path+".clusterAffinity", pl.ClusterAffinity)
	c.clusterAffinities(path, pl)
	for i, t := range pl.ClusterTolerations {
		c.toleration(indexPath(path+".clusterTolerations", i), t)
	}
	c.spreadConstraints(path+".spreadConstraints", pl.SpreadConstraints)
	if rs := pl.ReplicaScheduling; rs != nil {
		p := path + ".replicaScheduling"
		c.oneOf(p+".replicaSchedulingType", rs.ReplicaSchedulingType, policyv1alpha1.ReplicaSchedulingDuplicated, policyv1alpha1.ReplicaSchedulingDivided)
		c.oneOf(p+".replicaDivisionPreference", rs.ReplicaDivisionPreference, policyv1alpha1.DivisionAggregated, policyv1alpha1.DivisionWeighted)
		if wp := rs.WeightPreference; wp != nil {
			c.oneOf(p+".weightPreference.dynamicWeight", wp.DynamicWeight, policyv1alpha1.DynamicWeightAvailable)
			for i, w := range wp.StaticWeightList {
				wpath := indexPath(p+".weightPreference.staticWeightList", i)
				c.clusterAffinity(wpath+".targetCluster", &w.TargetCluster)
				c.weight(wpath+".weight", w.Weight)
			}
		}
	}
	c.workloadAffinity(path+".workloadAffinity", pl.WorkloadAffinity)
}

// workloadAffinity checks the group keys of the alpha workload affinity.
func (c *checker) workloadAffinity(path string, wa *policyv1alpha1.WorkloadAffinity) {
	if wa == nil {
		return
	}
	for _, t := range []struct {
		name string
		term *policyv1alpha1.WorkloadAffinityTerm
	}{{"affinity", wa.Affinity}, {"antiAffinity", wa.AntiAffinity}} {
		if t.term != nil && c.required(path+"."+t.name+".groupByLabelKey", t.term.GroupByLabelKey) {
			c.labelKey(path+"."+t.name+".groupByLabelKey", t.term.GroupByLabelKey)
		}
	}
	if wa.Affinity != nil && wa.AntiAffinity != nil && wa.Affinity.GroupByLabelKey == wa.AntiAffinity.GroupByLabelKey {
		c.add(path+".antiAffinity.groupByLabelKey", "%q is also the affinity's groupByLabelKey", wa.AntiAffinity.GroupByLabelKey)
	}
}

// clusterAffinities checks names (valid, unique) and overflow tiers.
func (c *checker) clusterAffinities(path string, pl *policyv1alpha1.Placement) {
	seen := map[string]bool{}
	for i, term := range pl.ClusterAffinities {
		p := indexPath(path+".clusterAffinities", i)
		c.affinityName(p+".affinityName", term.AffinityName)
		if term.AffinityName != "" && seen[term.AffinityName] {
			c.add(p+".affinityName", "%q is used by another term: affinity names must be unique", term.AffinityName)
		}
		seen[term.AffinityName] = true
		c.clusterAffinity(p, &term.ClusterAffinity)
		if len(term.OverflowAffinities) == 0 {
			continue
		}
		if isEmptyAffinity(term.ClusterAffinity) {
			c.add(p+".overflowAffinities", "needs a non-empty affinity in the term itself")
		}
		if !overflowAllowed(pl.ReplicaScheduling) {
			c.add(p+".overflowAffinities", "needs replicaScheduling Divided with Aggregated, or Weighted with dynamicWeight")
		}
		names := map[string]bool{term.AffinityName: true}
		for j, o := range term.OverflowAffinities {
			op := indexPath(p+".overflowAffinities", j)
			c.affinityName(op+".affinityName", o.AffinityName)
			if o.AffinityName != "" && names[o.AffinityName] {
				c.add(op+".affinityName", "%q is already used in this term: overflow names must be unique and differ from the term's name", o.AffinityName)
			}
			names[o.AffinityName] = true
			c.clusterAffinity(op, &o.ClusterAffinity)
		}
	}
}

func (c *checker) affinityName(field, name string) {
	if !c.required(field, name) {
		return
	}
	if len(name) > 32 {
		c.add(field, "%q is longer than 32 characters", name)
	}
	c.labelKey(field, name)
}

func isEmptyAffinity(a policyv1alpha1.ClusterAffinity) bool {
	return a.LabelSelector == nil && a.FieldSelector == nil && len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0
}

func overflowAllowed(rs *policyv1alpha1.ReplicaSchedulingStrategy) bool {
	if rs == nil || (rs.ReplicaSchedulingType != "" && rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingDivided) {
		return false
	}
	switch rs.ReplicaDivisionPreference {
	case policyv1alpha1.DivisionAggregated:
		return true
	case policyv1alpha1.DivisionWeighted, "":
		return rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
	}
	return false
}

// toleration follows Kubernetes' toleration validation, except that an
// empty key with the Equal operator is allowed (Karmada's own samples use
// it); Karmada also rejects the numeric Lt/Gt operators for clusters.
func (c *checker) toleration(path string, t corev1.Toleration) {
	if t.Key != "" {
		c.labelKey(path+".key", t.Key)
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		c.labelValue(path+".value", t.Value)
	case corev1.TolerationOpExists:
		if t.Value != "" {
			c.add(path+".value", "must be empty when operator is Exists")
		}
	case "Lt", "Gt":
		c.add(path+".operator", "%q is not supported for cluster tolerations: use Equal or Exists", t.Operator)
	default:
		c.oneOf(path+".operator", string(t.Operator), "Equal", "Exists")
	}
	c.oneOf(path+".effect", string(t.Effect), taintEffects...)
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		c.add(path+".tolerationSeconds", "only allowed with effect NoExecute")
	}
}

var taintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// spreadConstraints follows Karmada's ValidateSpreadConstraint; an entry
// with neither spreadByField nor spreadByLabel counts as spreadByField
// cluster, which is what Karmada's webhook defaults it to.
func (c *checker) spreadConstraints(path string, scs []policyv1alpha1.SpreadConstraint) {
	fields := map[string]bool{}
	for i, sc := range scs {
		p := indexPath(path, i)
		if sc.SpreadByField != "" && sc.SpreadByLabel != "" {
			c.add(p, "spreadByField and spreadByLabel cannot both be set")
		}
		c.oneOf(p+".spreadByField", sc.SpreadByField, policyv1alpha1.SpreadByCluster, policyv1alpha1.SpreadByRegion, policyv1alpha1.SpreadByZone, policyv1alpha1.SpreadByProvider)
		if sc.MinGroups < 0 {
			c.add(p+".minGroups", "%d must not be negative", sc.MinGroups)
		}
		if sc.MaxGroups < 0 {
			c.add(p+".maxGroups", "%d must not be negative", sc.MaxGroups)
		}
		if sc.MaxGroups > 0 && sc.MaxGroups < sc.MinGroups {
			c.add(p+".maxGroups", "%d is less than minGroups %d", sc.MaxGroups, sc.MinGroups)
		}
		field := sc.SpreadByField
		if field == "" && sc.SpreadByLabel == "" {
			field = policyv1alpha1.SpreadByCluster
		}
		if field != "" && fields[field] {
			c.add(p+".spreadByField", "%q is used by another spread constraint", field)
		}
		if field != "" {
			fields[field] = true
		}
	}
	if len(fields) > 0 && !fields[policyv1alpha1.SpreadByCluster] {
		keys := sortedKeys(fields)
		c.add(path, "spreadByField %s also needs a spreadByField: cluster constraint", keys[0])
	}
}

// failover checks application and cluster failover.
func (c *checker) failover(path string, s *policyv1alpha1.PropagationSpec) {
	if s.Failover == nil {
		return
	}
	if app := s.Failover.Application; app != nil {
		p := path + ".application"
		if !s.PropagateDeps {
			c.missing(p, "spec.propagateDeps", "requires spec.propagateDeps: true")
		}
		if ts := app.DecisionConditions.TolerationSeconds; ts != nil && *ts < 0 {
			c.add(p+".decisionConditions.tolerationSeconds", "%d must not be negative", *ts)
		}
		c.oneOf(p+".purgeMode", app.PurgeMode, purgeModes...)
		graceful := app.PurgeMode == "" || app.PurgeMode == policyv1alpha1.PurgeGracefully || app.PurgeMode == policyv1alpha1.PurgeGraciously
		if gp := app.GracePeriodSeconds; gp != nil {
			if !graceful && slices.Contains(purgeModes, app.PurgeMode) {
				c.add(p+".gracePeriodSeconds", "only allowed with purgeMode Gracefully, not %s", app.PurgeMode)
			} else if *gp <= 0 {
				c.add(p+".gracePeriodSeconds", "%d must be greater than 0", *gp)
			}
		}
		c.statePreservation(p+".statePreservation", app.StatePreservation)
	}
	if cl := s.Failover.Cluster; cl != nil {
		c.oneOf(path+".cluster.purgeMode", cl.PurgeMode, policyv1alpha1.PurgeDirectly, policyv1alpha1.PurgeGracefully,
			policyv1alpha1.PurgeImmediately, policyv1alpha1.PurgeGraciously)
		c.statePreservation(path+".cluster.statePreservation", cl.StatePreservation)
	}
}

var purgeModes = []string{policyv1alpha1.PurgeDirectly, policyv1alpha1.PurgeGracefully, policyv1alpha1.PurgeNever,
	policyv1alpha1.PurgeImmediately, policyv1alpha1.PurgeGraciously}

func (c *checker) statePreservation(path string, sp *policyv1alpha1.StatePreservation) {
	if sp == nil {
		return
	}
	if len(sp.Rules) == 0 {
		c.add(path+".rules", "required: list at least one rule")
	}
	for i, r := range sp.Rules {
		p := indexPath(path+".rules", i)
		if c.required(p+".aliasLabelName", r.AliasLabelName) {
			c.labelKey(p+".aliasLabelName", r.AliasLabelName)
		}
		c.required(p+".jsonPath", r.JSONPath)
	}
}

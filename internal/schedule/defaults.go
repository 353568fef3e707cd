package schedule

import (
	"fmt"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// strategy is the replica assignment a placement asks for.
type strategy int

const (
	duplicated strategy = iota
	staticWeight
	dynamicWeight
	aggregated
)

// String names the strategy the way Steps prints it.
func (s strategy) String() string {
	switch s {
	case staticWeight:
		return "Divided/Weighted static"
	case dynamicWeight:
		return "Divided/Weighted dynamic"
	case aggregated:
		return "Divided/Aggregated"
	}
	return "Duplicated"
}

// withDefaults returns a copy of p with Karmada's webhook and CRD defaulting
// applied: a spread constraint with neither spreadByField nor spreadByLabel
// spreads by cluster, minGroups 0 becomes 1 (maxGroups is never defaulted);
// a present replicaScheduling with an empty type is Divided, and Divided with
// an empty preference is Weighted. p itself is not modified.
func withDefaults(p policyv1alpha1.Placement) policyv1alpha1.Placement {
	if len(p.SpreadConstraints) > 0 {
		scs := make([]policyv1alpha1.SpreadConstraint, len(p.SpreadConstraints))
		for i, sc := range p.SpreadConstraints {
			if sc.SpreadByField == "" && sc.SpreadByLabel == "" {
				sc.SpreadByField = policyv1alpha1.SpreadByCluster
			}
			if sc.MinGroups == 0 {
				sc.MinGroups = 1
			}
			scs[i] = sc
		}
		p.SpreadConstraints = scs
	}
	if p.ReplicaScheduling != nil {
		rs := *p.ReplicaScheduling
		if rs.ReplicaSchedulingType == "" {
			rs.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingDivided
		}
		if rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingDivided && rs.ReplicaDivisionPreference == "" {
			rs.ReplicaDivisionPreference = policyv1alpha1.DivisionWeighted
		}
		p.ReplicaScheduling = &rs
	}
	return p
}

// strategyOf picks the assignment strategy of a defaulted placement: no
// replicaScheduling means Duplicated; Weighted with a dynamicWeight is
// dynamic, otherwise static.
func strategyOf(p policyv1alpha1.Placement) (strategy, error) {
	rs := p.ReplicaScheduling
	if rs == nil {
		return duplicated, nil
	}
	switch rs.ReplicaSchedulingType {
	case policyv1alpha1.ReplicaSchedulingDuplicated:
		return duplicated, nil
	case policyv1alpha1.ReplicaSchedulingDivided:
	default:
		return 0, fmt.Errorf("unsupported replicaSchedulingType %q", rs.ReplicaSchedulingType)
	}
	switch rs.ReplicaDivisionPreference {
	case policyv1alpha1.DivisionAggregated:
		return aggregated, nil
	case policyv1alpha1.DivisionWeighted:
		if rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "" {
			return dynamicWeight, nil
		}
		return staticWeight, nil
	}
	return 0, fmt.Errorf("unsupported replicaDivisionPreference %q", rs.ReplicaDivisionPreference)
}

// ignoresSpread reports whether spread constraints are skipped entirely:
// Divided/Weighted with no weightPreference, or with a static weight list
// and no dynamicWeight (Karmada issue #3184).
func ignoresSpread(p policyv1alpha1.Placement) bool {
	rs := p.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingDivided ||
		rs.ReplicaDivisionPreference != policyv1alpha1.DivisionWeighted {
		return false
	}
	wp := rs.WeightPreference
	return wp == nil || (len(wp.StaticWeightList) > 0 && wp.DynamicWeight == "")
}

// ignoresCapacity reports whether spread selection ignores available
// replicas: Duplicated (or no replicaScheduling).
func ignoresCapacity(p policyv1alpha1.Placement) bool {
	rs := p.ReplicaScheduling
	return rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingDuplicated
}

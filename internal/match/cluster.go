package match

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// Cluster reports whether cluster satisfies affinity, following Karmada's
// ClusterMatches: exclude wins, then every part that is set must match. A nil
// affinity matches every cluster.
func Cluster(affinity *policyv1alpha1.ClusterAffinity, cluster *clusterv1alpha1.Cluster) bool {
	if affinity == nil {
		return true
	}
	if slices.Contains(affinity.ExcludeClusters, cluster.Name) {
		return false
	}
	if affinity.LabelSelector != nil && !Labels(affinity.LabelSelector, cluster.Labels) {
		return false
	}
	if affinity.FieldSelector != nil && !fields(affinity.FieldSelector, cluster) {
		return false
	}
	if len(affinity.ClusterNames) > 0 && !slices.Contains(affinity.ClusterNames, cluster.Name) {
		return false
	}
	return true
}

// fields matches provider and region like a label selector on the spec
// fields, and zone against spec.zones (overlap semantics).
func fields(fs *policyv1alpha1.FieldSelector, cluster *clusterv1alpha1.Cluster) bool {
	for _, req := range fs.MatchExpressions {
		switch req.Key {
		case policyv1alpha1.FieldProvider, policyv1alpha1.FieldRegion:
			value := cluster.Spec.Provider
			if req.Key == policyv1alpha1.FieldRegion {
				value = cluster.Spec.Region
			}
			if !field(req, value) {
				return false
			}
		case policyv1alpha1.FieldZone:
			if !zones(req, Zones(cluster)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// field matches a single-valued field like a label selector requirement
// does: an empty field is an absent label (so NotIn and DoesNotExist hold).
func field(req corev1.NodeSelectorRequirement, value string) bool {
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		return value != "" && slices.Contains(req.Values, value)
	case corev1.NodeSelectorOpNotIn:
		return value == "" || !slices.Contains(req.Values, value)
	case corev1.NodeSelectorOpExists:
		return value != ""
	case corev1.NodeSelectorOpDoesNotExist:
		return value == ""
	}
	return false
}

func zones(req corev1.NodeSelectorRequirement, have []string) bool {
	overlap := slices.ContainsFunc(have, func(z string) bool { return slices.Contains(req.Values, z) })
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		return overlap
	case corev1.NodeSelectorOpNotIn:
		return !overlap
	case corev1.NodeSelectorOpExists:
		return len(have) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(have) == 0
	}
	return false
}

// Zones returns spec.zones, or the deprecated spec.zone as a one-element list
// (Karmada moves zone into zones on write).
func Zones(cluster *clusterv1alpha1.Cluster) []string {
	if len(cluster.Spec.Zones) > 0 {
		return cluster.Spec.Zones
	}
	if cluster.Spec.Zone != "" {
		return []string{cluster.Spec.Zone}
	}
	return nil
}

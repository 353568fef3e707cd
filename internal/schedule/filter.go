package schedule

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/match"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
)

// filter runs Karmada's filter plugins in order (ClusterAffinity,
// TaintToleration, APIEnablement, SpreadConstraint, ClusterEviction) and
// returns the reason of the first one that rejects c, or "" when c is
// feasible. tier is c's overflow tier: 0 for the term itself, i for the i-th
// overflow affinity.
func (r *run) filter(c *clusterv1alpha1.Cluster, t term) (reason string, tier int) {
	if reason, tier = r.affinityFilter(c, t); reason != "" {
		return reason, 0
	}
	for _, f := range []func(*clusterv1alpha1.Cluster) string{r.taintFilter, r.apiFilter, r.spreadFilter, r.evictionFilter} {
		if reason = f(c); reason != "" {
			return reason, 0
		}
	}
	return "", tier
}

// affinityFilter checks the term's affinity; for workloads its overflow
// affinities are OR-ed in, and the first one that matches gives the tier.
func (r *run) affinityFilter(c *clusterv1alpha1.Cluster, t term) (string, int) {
	reason := affinityReason(t.affinity, c)
	if reason == "" {
		return "", 0
	}
	if !r.workload || len(t.overflow) == 0 {
		return reason, 0
	}
	for i := range t.overflow {
		if match.Cluster(&t.overflow[i].ClusterAffinity, c) {
			return "", i + 1
		}
	}
	return reason + " (nor any overflow affinity)", 0
}

// affinityReason names the first part of a that rejects c, in the order
// match.Cluster checks them; "" when a matches.
func affinityReason(a *policyv1alpha1.ClusterAffinity, c *clusterv1alpha1.Cluster) string {
	if match.Cluster(a, c) {
		return ""
	}
	switch {
	case slices.Contains(a.ExcludeClusters, c.Name):
		return "excluded"
	case a.LabelSelector != nil && !match.Cluster(&policyv1alpha1.ClusterAffinity{LabelSelector: a.LabelSelector}, c):
		return "labelSelector does not match"
	case a.FieldSelector != nil && !match.Cluster(&policyv1alpha1.ClusterAffinity{FieldSelector: a.FieldSelector}, c):
		return "fieldSelector does not match"
	case len(a.ClusterNames) > 0 && !slices.Contains(a.ClusterNames, c.Name):
		return "not in clusterNames"
	}
	return "clusterAffinity does not match"
}

// taintFilter rejects a cluster with an untolerated NoSchedule or NoExecute
// effective taint. Clusters of the previous placement are never rejected
// (Karmada leaves them to the taint manager).
func (r *run) taintFilter(c *clusterv1alpha1.Cluster) string {
	if _, ok := r.prev[c.Name]; ok {
		return ""
	}
	for _, taint := range EffectiveTaints(c) {
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerated(r.placement.ClusterTolerations, &taint) {
			return fmt.Sprintf("taint %s not tolerated", taint.ToString())
		}
	}
	return ""
}

// tolerated uses Kubernetes' ToleratesTaint; the Lt/Gt operators (rejected
// by Karmada's validation) never match.
func tolerated(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, false) {
			return true
		}
	}
	return false
}

// apiFilter requires status.apiEnablements to list the template's
// groupVersion with a resource of its kind. Skipped for clusters of the
// previous placement. Deviation decided by the project: a cluster with a nil
// Status has every API enabled. A HelmChart never reaches a member (its
// chart's objects do, each filtered on its own), so any cluster may take one.
func (r *run) apiFilter(c *clusterv1alpha1.Cluster) string {
	if _, ok := r.prev[c.Name]; ok || c.Status == nil || chartv1alpha1.IsHelmChart(r.apiVersion, r.kind) {
		return ""
	}
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion != r.apiVersion {
			continue
		}
		for _, res := range e.Resources {
			if res.Kind == r.kind {
				return ""
			}
		}
	}
	return fmt.Sprintf("API %s %s not enabled", r.apiVersion, r.kind)
}

// spreadFilter rejects clusters that lack the field a provider, region or
// zone spread constraint groups by, even when the constraints are otherwise
// ignored.
func (r *run) spreadFilter(c *clusterv1alpha1.Cluster) string {
	for _, sc := range r.placement.SpreadConstraints {
		switch {
		case sc.SpreadByField == policyv1alpha1.SpreadByProvider && c.Spec.Provider == "":
			return "no provider, but spreadConstraints spread by provider"
		case sc.SpreadByField == policyv1alpha1.SpreadByRegion && c.Spec.Region == "":
			return "no region, but spreadConstraints spread by region"
		case sc.SpreadByField == policyv1alpha1.SpreadByZone && len(match.Zones(c)) == 0:
			return "no zones, but spreadConstraints spread by zone"
		}
	}
	return ""
}

// evictionFilter rejects clusters with a pending graceful eviction.
func (r *run) evictionFilter(c *clusterv1alpha1.Cluster) string {
	if r.evicted[c.Name] {
		return "graceful eviction in progress"
	}
	return ""
}

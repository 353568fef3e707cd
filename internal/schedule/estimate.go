package schedule

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// estimate is Karmada's general estimator (§4.7): how many replicas with the
// given per-replica requests still fit in c, from status.resourceSummary.
//
//   - no status or no resourceSummary: 0 (capacity unknown);
//   - allowed pods = allocatable − allocated − allocating pods; ≤ 0, or no
//     pods entry, gives 0;
//   - for each request with a positive value: free = allocatable − allocated
//     − allocating; a resource missing from allocatable, or no free amount,
//     gives 0; cpu is counted in millis, everything else in whole units;
//   - the result is the minimum over the resources and the allowed pods.
//
// allocatableModelings (Karmada's resource-model simulation, which can only
// lower the result) are ignored. The result is capped at MaxInt32.
func estimate(c *clusterv1alpha1.Cluster, requests corev1.ResourceList) int64 {
	if c.Status == nil || c.Status.ResourceSummary == nil {
		return 0
	}
	rs := c.Status.ResourceSummary
	pods, ok := free(rs, corev1.ResourcePods)
	if !ok || pods.Value() <= 0 {
		return 0
	}
	best := min(pods.Value(), math.MaxInt32)
	for name, req := range requests {
		if req.Value() <= 0 {
			continue
		}
		avail, ok := free(rs, name)
		if !ok || avail.Sign() <= 0 {
			return 0
		}
		var n int64
		if name == corev1.ResourceCPU {
			n = avail.MilliValue() / req.MilliValue()
		} else {
			n = avail.Value() / req.Value()
		}
		best = min(best, n)
	}
	return best
}

// free is allocatable − allocated − allocating for one resource; false when
// the resource is not allocatable at all.
func free(rs *clusterv1alpha1.ResourceSummary, name corev1.ResourceName) (resource.Quantity, bool) {
	alloc, ok := rs.Allocatable[name]
	if !ok {
		return resource.Quantity{}, false
	}
	q := alloc.DeepCopy()
	if used, ok := rs.Allocated[name]; ok {
		q.Sub(used)
	}
	if used, ok := rs.Allocating[name]; ok {
		q.Sub(used)
	}
	return q, true
}

package schedule

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// EffectiveTaints returns the taints Karmada's scheduler would see on c:
// spec.taints with the NoSchedule readiness taints that Karmada's cluster
// controller maintains recomputed from the Ready condition:
//
//   - Ready=True: neither readiness taint;
//   - Ready=False, or a status without a Ready condition:
//     cluster.karmada.io/not-ready:NoSchedule;
//   - Ready=Unknown: cluster.karmada.io/unreachable:NoSchedule;
//   - any other Ready value: spec.taints unchanged (the controller ignores it).
//
// Deviation decided by the project: a cluster whose Status is nil counts as
// Ready, so it gets no readiness taint. A readiness NoSchedule taint written
// in spec.taints is replaced by the computed one, as the controller would
// do. Other taints, including NoExecute readiness taints, are kept as written.
func EffectiveTaints(c *clusterv1alpha1.Cluster) []corev1.Taint {
	strip, add := readinessTaint(c)
	var out []corev1.Taint
	for _, t := range c.Spec.Taints {
		if strip && isReadinessTaint(t) {
			continue
		}
		out = append(out, t)
	}
	if add != "" {
		out = append(out, corev1.Taint{Key: add, Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

// readinessTaint says whether the controller-managed readiness taints are
// recomputed for c, and which one (if any) is then added.
func readinessTaint(c *clusterv1alpha1.Cluster) (strip bool, add string) {
	if c.Status == nil {
		return true, ""
	}
	ready := findCondition(c.Status.Conditions, clusterv1alpha1.ConditionReady)
	if ready == nil {
		return true, clusterv1alpha1.TaintNotReady
	}
	switch ready.Status {
	case metav1.ConditionTrue:
		return true, ""
	case metav1.ConditionFalse:
		return true, clusterv1alpha1.TaintNotReady
	case metav1.ConditionUnknown:
		return true, clusterv1alpha1.TaintUnreachable
	}
	return false, ""
}

func isReadinessTaint(t corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule &&
		(t.Key == clusterv1alpha1.TaintNotReady || t.Key == clusterv1alpha1.TaintUnreachable)
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

func TestEffectiveTaints(t *testing.T) {
	notReady := corev1.Taint{Key: clusterv1alpha1.TaintNotReady, Effect: corev1.TaintEffectNoSchedule}
	unreachable := corev1.Taint{Key: clusterv1alpha1.TaintUnreachable, Effect: corev1.TaintEffectNoSchedule}
	user := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}
	notReadyExecute := corev1.Taint{Key: clusterv1alpha1.TaintNotReady, Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		want    []corev1.Taint
	}{
		{
			name:    "nil status counts as ready (project deviation)",
			cluster: newCluster("a"),
			want:    nil,
		},
		{
			name:    "nil status drops a stale readiness taint",
			cluster: newCluster("a", withTaint(notReady.Key, "", notReady.Effect)),
			want:    nil,
		},
		{
			name:    "ready keeps user taints",
			cluster: newCluster("a", withReady(metav1.ConditionTrue), withTaint(user.Key, user.Value, user.Effect)),
			want:    []corev1.Taint{user},
		},
		{
			name:    "ready false adds not-ready",
			cluster: newCluster("a", withReady(metav1.ConditionFalse), withTaint(user.Key, user.Value, user.Effect)),
			want:    []corev1.Taint{user, notReady},
		},
		{
			name:    "ready unknown adds unreachable and drops not-ready",
			cluster: newCluster("a", withReady(metav1.ConditionUnknown), withTaint(notReady.Key, "", notReady.Effect)),
			want:    []corev1.Taint{unreachable},
		},
		{
			name: "status without a Ready condition is not ready",
			cluster: newCluster("a", func(c *clusterv1alpha1.Cluster) {
				c.Status = &clusterv1alpha1.ClusterStatus{}
			}),
			want: []corev1.Taint{notReady},
		},
		{
			name:    "NoExecute readiness taints are the user's and stay",
			cluster: newCluster("a", withReady(metav1.ConditionTrue), withTaint(notReadyExecute.Key, "", notReadyExecute.Effect)),
			want:    []corev1.Taint{notReadyExecute},
		},
		{
			name:    "an unrecognised Ready value leaves spec.taints alone",
			cluster: newCluster("a", withReady("Maybe"), withTaint(notReady.Key, "", notReady.Effect)),
			want:    []corev1.Taint{notReady},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, EffectiveTaints(tt.cluster)); diff != "" {
				t.Errorf("EffectiveTaints() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

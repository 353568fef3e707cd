package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestClusterAnnotations pins what a Work says of its cluster: the Ready
// status and every taint, Git's and those readiness brings (Karmada's
// NoSchedule one, the NoExecute one failover acts on).
func TestClusterAnnotations(t *testing.T) {
	maintenance := corev1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	cluster := func(ready metav1.ConditionStatus, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
		if ready != "" {
			cl.Status = &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: ready}}}
		}
		return cl
	}
	for _, tc := range []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		want    map[string]string
	}{
		{"no status counts as Ready", cluster(""), map[string]string{workv1alpha1.AnnotationClusterReady: "True"}},
		{"Ready, in maintenance", cluster(metav1.ConditionTrue, maintenance), map[string]string{
			workv1alpha1.AnnotationClusterReady:  "True",
			workv1alpha1.AnnotationClusterTaints: "maintenance=true:NoSchedule"}},
		{"unreachable, in maintenance", cluster(metav1.ConditionUnknown, maintenance), map[string]string{
			workv1alpha1.AnnotationClusterReady:  "Unknown",
			workv1alpha1.AnnotationClusterTaints: "maintenance=true:NoSchedule,cluster.karmada.io/unreachable:NoSchedule,cluster.karmada.io/unreachable:NoExecute"}},
		{"not ready", cluster(metav1.ConditionFalse), map[string]string{
			workv1alpha1.AnnotationClusterReady:  "False",
			workv1alpha1.AnnotationClusterTaints: "cluster.karmada.io/not-ready:NoSchedule,cluster.karmada.io/not-ready:NoExecute"}},
		{"NoExecute taint declared in Git is not doubled", cluster(metav1.ConditionFalse,
			corev1.Taint{Key: clusterv1alpha1.TaintNotReady, Effect: corev1.TaintEffectNoExecute}), map[string]string{
			workv1alpha1.AnnotationClusterReady:  "False",
			workv1alpha1.AnnotationClusterTaints: "cluster.karmada.io/not-ready:NoExecute,cluster.karmada.io/not-ready:NoSchedule"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterAnnotations(tc.cluster)); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

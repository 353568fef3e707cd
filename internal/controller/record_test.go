package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// TestObjectKeysSame: the prune guard skips its count only when the new
// objects have the recorded keys at the recorded positions; a removed,
// renamed or moved object sends it to the count.
func TestObjectKeysSame(t *testing.T) {
	cm := func(name, value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "demo"}, "data": map[string]any{"v": value}}}
	}
	a, b, c := cm("a", "1"), cm("b", "1"), cm("c", "1")
	recorded := []*unstructured.Unstructured{a, b, c}
	for _, tc := range []struct {
		name  string
		after []*unstructured.Unstructured
		want  bool
	}{
		{"the very objects", []*unstructured.Unstructured{a, b, c}, true},
		{"one changed, same key", []*unstructured.Unstructured{a, cm("b", "2"), c}, true},
		{"one removed", []*unstructured.Unstructured{a, c}, false},
		{"one renamed", []*unstructured.Unstructured{a, cm("x", "1"), c}, false},
		{"one added", []*unstructured.Unstructured{a, b, c, cm("d", "1")}, false},
		{"two swapped", []*unstructured.Unstructured{b, a, c}, false},
	} {
		if got := (objectKeys{}).same(recorded, tc.after); got != tc.want {
			t.Errorf("%s: same = %v, want %v", tc.name, got, tc.want)
		}
	}
}

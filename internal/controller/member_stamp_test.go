package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestStampProbeRecordsVersionAndCapacity pins what a push member's status
// carries of its probe: the version and allocatable capacity, written only
// when they change, never the readiness the controller keeps to itself.
func TestStampProbeRecordsVersionAndCapacity(t *testing.T) {
	m := &member{}
	st := &workv1alpha1.WorkStatus{}
	if m.stampProbe(st) || st.Cluster != nil {
		t.Fatalf("stamped before any probe: %+v", st.Cluster)
	}
	m.setProbe(&clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.37.2",
		Conditions:      []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: "True"}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}})
	if !m.stampProbe(st) {
		t.Fatal("the first probe was not stamped")
	}
	if st.Cluster.KubernetesVersion != "v1.37.2" || st.Cluster.ResourceSummary.Allocatable.Cpu().String() != "4" || len(st.Cluster.Conditions) != 0 {
		t.Errorf("stamped %+v, want version and capacity only", st.Cluster)
	}
	if m.stampProbe(st) {
		t.Error("an unchanged probe asked for a write")
	}
}

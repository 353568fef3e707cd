package schedule

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

func TestEstimate(t *testing.T) {
	q := resource.MustParse
	summary := func(allocatable, allocated, allocating corev1.ResourceList) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{Status: &clusterv1alpha1.ClusterStatus{
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: allocatable, Allocated: allocated, Allocating: allocating},
		}}
	}
	tests := []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		requests corev1.ResourceList
		want     int64
	}{
		{
			name:    "no status means unknown capacity, so 0",
			cluster: &clusterv1alpha1.Cluster{},
			want:    0,
		},
		{
			name:    "no resourceSummary gives 0",
			cluster: &clusterv1alpha1.Cluster{Status: &clusterv1alpha1.ClusterStatus{}},
			want:    0,
		},
		{
			name:    "missing pods key gives 0",
			cluster: summary(corev1.ResourceList{"cpu": q("8")}, nil, nil),
			want:    0,
		},
		{
			name:    "without requests the free pod count is the answer",
			cluster: summary(corev1.ResourceList{"pods": q("110")}, corev1.ResourceList{"pods": q("10")}, corev1.ResourceList{"pods": q("5")}),
			want:    95,
		},
		{
			name:    "more pods allocated than allocatable gives 0",
			cluster: summary(corev1.ResourceList{"pods": q("10")}, corev1.ResourceList{"pods": q("12")}, nil),
			want:    0,
		},
		{
			name:     "cpu is counted in millis",
			cluster:  summary(corev1.ResourceList{"pods": q("100"), "cpu": q("2")}, corev1.ResourceList{"cpu": q("500m")}, nil),
			requests: corev1.ResourceList{"cpu": q("300m")},
			want:     5,
		},
		{
			name:     "memory is counted in bytes, rounded down",
			cluster:  summary(corev1.ResourceList{"pods": q("100"), "memory": q("1Gi")}, nil, nil),
			requests: corev1.ResourceList{"memory": q("300Mi")},
			want:     3,
		},
		{
			name:     "the minimum over resources and pods wins",
			cluster:  summary(corev1.ResourceList{"pods": q("2"), "cpu": q("10"), "memory": q("10Gi")}, nil, nil),
			requests: corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
			want:     2,
		},
		{
			name:     "a requested resource missing from allocatable gives 0",
			cluster:  summary(corev1.ResourceList{"pods": q("100"), "cpu": q("10")}, nil, nil),
			requests: corev1.ResourceList{"cpu": q("1"), "nvidia.com/gpu": q("1")},
			want:     0,
		},
		{
			name:     "a fully used resource gives 0",
			cluster:  summary(corev1.ResourceList{"pods": q("100"), "cpu": q("4")}, corev1.ResourceList{"cpu": q("3")}, corev1.ResourceList{"cpu": q("1")}),
			requests: corev1.ResourceList{"cpu": q("100m")},
			want:     0,
		},
		{
			name:     "a zero request is ignored",
			cluster:  summary(corev1.ResourceList{"pods": q("7")}, nil, nil),
			requests: corev1.ResourceList{"memory": q("0")},
			want:     7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := estimate(tt.cluster, tt.requests); got != tt.want {
				t.Errorf("estimate() = %d, want %d", got, tt.want)
			}
		})
	}
}

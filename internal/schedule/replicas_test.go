package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestReplicas(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		template     string
		wantReplicas int32
		wantRequests corev1.ResourceList
		wantWorkload bool
	}{
		{"deployment-requests", 3, corev1.ResourceList{"cpu": q("300m"), "memory": q("128Mi")}, true},
		{"deployment-no-replicas", 1, nil, true},
		{"deployment-zero-replicas", 0, nil, false},
		{"deployment-zero-replicas-requests", 0, corev1.ResourceList{"cpu": q("1")}, true},
		{"deployment-zero-replicas-node-selector", 0, nil, true},
		{"deployment-limits", 2, corev1.ResourceList{"cpu": q("1"), "memory": q("128Mi")}, true},
		{"deployment-init-overhead", 1, corev1.ResourceList{"cpu": q("550m"), "memory": q("512Mi")}, true},
		{"statefulset", 5, nil, true},
		{"replicaset", 4, nil, true},
		{"job-completions", 3, nil, true},
		{"job-parallelism", 4, nil, true},
		{"job-defaults", 1, nil, true},
		{"pod", 1, corev1.ResourceList{"nvidia.com/gpu": q("1")}, true},
		{"daemonset", 0, nil, false},
		{"configmap", 0, nil, false},
		{"deployment-old-apiversion", 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			replicas, requests, workload := Replicas(loadTemplate(t, tt.template))
			if replicas != tt.wantReplicas || workload != tt.wantWorkload {
				t.Errorf("Replicas() = %d, workload %v; want %d, workload %v", replicas, workload, tt.wantReplicas, tt.wantWorkload)
			}
			if diff := cmp.Diff(tt.wantRequests, requests, quantityEqual); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicasNilTemplate(t *testing.T) {
	replicas, requests, workload := Replicas(nil)
	if replicas != 0 || requests != nil || workload {
		t.Errorf("Replicas(nil) = %d, %v, %v; want 0, nil, false", replicas, requests, workload)
	}
}

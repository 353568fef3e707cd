package podrequests

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(cpu, mem string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	if cpu != "" {
		r.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		r.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return r
}

func TestOf(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name    string
		spec    corev1.PodSpec
		wantCPU string
		wantMem string
	}{
		{name: "containers are summed",
			spec:    corev1.PodSpec{Containers: []corev1.Container{{Resources: res("100m", "64Mi")}, {Resources: res("200m", "")}}},
			wantCPU: "300m", wantMem: "64Mi"},
		{name: "an init container is a peak, not a sum",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: res("100m", "")}},
				InitContainers: []corev1.Container{{Resources: res("500m", "")}}},
			wantCPU: "500m"},
		{name: "a native sidecar runs alongside the containers and is added",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: res("100m", "")}},
				InitContainers: []corev1.Container{{Resources: res("50m", ""), RestartPolicy: &always}}},
			wantCPU: "150m"},
		{name: "an init container after a sidecar peaks on top of it",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: res("100m", "")}},
				InitContainers: []corev1.Container{{Resources: res("50m", ""), RestartPolicy: &always}, {Resources: res("400m", "")}}},
			wantCPU: "450m"},
		{name: "a limit stands in for a missing request",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			wantCPU: "1"},
		{name: "overhead is added",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: res("100m", "")}},
				Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
			wantCPU: "110m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of(&tt.spec)
			check := func(name corev1.ResourceName, want string) {
				q, ok := got[name]
				if want == "" {
					if ok {
						t.Errorf("%s = %s, want none", name, q.String())
					}
					return
				}
				if !ok || q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("%s = %s, want %s", name, q.String(), want)
				}
			}
			check(corev1.ResourceCPU, tt.wantCPU)
			check(corev1.ResourceMemory, tt.wantMem)
		})
	}
	if got := Of(&corev1.PodSpec{Containers: []corev1.Container{{}}}); got != nil {
		t.Errorf("no requests: got %v, want nil", got)
	}
}

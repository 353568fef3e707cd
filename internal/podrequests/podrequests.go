// Package podrequests computes what one pod asks of a node, the figure the
// scheduler divides capacity by and a member probe sums over running pods.
// One implementation, so the estimate and the measurement agree; the
// arithmetic (containers summed, init containers as a peak, native sidecars
// counted alongside the containers they run with, overhead added) is
// Kubernetes' own, from k8s.io/component-helpers.
package podrequests

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Of returns the requests of a pod with spec. A container's limit stands in
// for a request it does not set, as the apiserver's defaulting does, so an
// undefaulted spec from Git counts like the pod it becomes. Zero and
// negative totals are left out; nil when nothing is requested.
func Of(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for i := range pod.Spec.Containers {
		defaultRequests(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		defaultRequests(&pod.Spec.InitContainers[i])
	}
	sum := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range sum {
		if q.Sign() <= 0 {
			delete(sum, name)
		}
	}
	if len(sum) == 0 {
		return nil
	}
	return sum
}

func defaultRequests(c *corev1.Container) {
	for name, q := range c.Resources.Limits {
		if _, set := c.Resources.Requests[name]; !set {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[name] = q.DeepCopy()
		}
	}
}

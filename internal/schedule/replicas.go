package schedule

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/podrequests"
)

// Replicas reads a template's desired replicas and per-replica resource
// requests the way Karmada's default interpreter does (§4.6):
//
//   - apps/v1 Deployment, ReplicaSet, StatefulSet: spec.replicas; a missing
//     value counts as 1, the apiserver default (the only defaulting applied);
//   - batch/v1 Job: spec.parallelism (missing: 1), capped by spec.completions
//     when that is set;
//   - v1 Pod: always 1.
//
// Requests are summed over containers (a limit stands in for a missing
// request), raised to each init container's, plus the pod overhead; zero
// entries are dropped and an empty result is nil. workload is Karmada's
// definition: replicas > 0, or per-replica requirements (requests, or a node
// claim: nodeSelector, tolerations, required node affinity). Every other kind
// returns (0, nil, false). A pod spec that cannot be decoded counts as
// having no requirements.
func Replicas(obj *unstructured.Unstructured) (replicas int32, requests corev1.ResourceList, workload bool) {
	if obj == nil {
		return 0, nil, false
	}
	var podPath []string
	switch kindOf(obj) {
	case "apps/v1/Deployment", "apps/v1/ReplicaSet", "apps/v1/StatefulSet":
		replicas = intField(obj.Object, 1, "spec", "replicas")
		podPath = []string{"spec", "template", "spec"}
	case "batch/v1/Job":
		replicas = intField(obj.Object, 1, "spec", "parallelism")
		if completions := intField(obj.Object, math.MaxInt32, "spec", "completions"); completions < replicas {
			replicas = completions
		}
		podPath = []string{"spec", "template", "spec"}
	case "v1/Pod":
		replicas = 1
		podPath = []string{"spec"}
	default:
		return 0, nil, false
	}
	spec := podSpec(obj.Object, podPath)
	requests = podrequests.Of(spec)
	workload = replicas > 0 || len(requests) > 0 || hasNodeClaim(spec)
	return replicas, requests, workload
}

func kindOf(obj *unstructured.Unstructured) string {
	return obj.GetAPIVersion() + "/" + obj.GetKind()
}

// intField reads an integer field; missing, null or non-integer values give
// def.
func intField(obj map[string]any, def int32, path ...string) int32 {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return def
	}
	switch n := v.(type) {
	case int64:
		return clampInt32(n)
	case int32:
		return n
	case int:
		return clampInt32(int64(n))
	case float64:
		if n == math.Trunc(n) {
			return clampInt32(int64(n))
		}
	}
	return def
}

func clampInt32(n int64) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	if n < math.MinInt32 {
		return math.MinInt32
	}
	return int32(n)
}

func podSpec(obj map[string]any, path []string) *corev1.PodSpec {
	spec := &corev1.PodSpec{}
	field, found, err := unstructured.NestedFieldNoCopy(obj, path...) // read, not changed: no copy
	raw, isMap := field.(map[string]any)
	if err != nil || !found || !isMap {
		return spec
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
		return &corev1.PodSpec{}
	}
	return spec
}

// hasNodeClaim reports whether the pod spec constrains nodes: a nodeSelector,
// tolerations, or a required node affinity.
func hasNodeClaim(spec *corev1.PodSpec) bool {
	a := spec.Affinity
	required := a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
	return required || len(spec.Tolerations) > 0 || len(spec.NodeSelector) > 0
}

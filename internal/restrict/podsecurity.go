package restrict

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
)

// Pod Security Standards levels, the values of Policy.PodSecurity.
const (
	PodSecurityPrivileged = "privileged"
	PodSecurityBaseline   = "baseline"
	PodSecurityRestricted = "restricted"
)

// RulePodSecurity names the Pod Security Standards check in a Refusal.
const RulePodSecurity = "pod-security"

// PodSpecPath says where a kind keeps a pod spec: Kind is "Kind.group"
// ("Rollout.argoproj.io"), Path the dot-separated fields to the PodSpec;
// a field ending in "[]" is a list whose every element is followed
// ("spec.replicatedJobs[].template.spec.template.spec").
type PodSpecPath struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// DefaultPodSpecPaths are the kinds whose pod specs are checked without
// configuration: the built-in workloads, and the common custom resources
// that embed a full pod template (Argo Rollouts, Knative Serving,
// OpenKruise, KEDA ScaledJob, JobSet). A policy's PodSpecPaths add to them.
var DefaultPodSpecPaths = []PodSpecPath{
	{"Pod", "spec"},
	{"PodTemplate", "template.spec"},
	{"ReplicationController", "spec.template.spec"},
	{"Deployment.apps", "spec.template.spec"},
	{"StatefulSet.apps", "spec.template.spec"},
	{"DaemonSet.apps", "spec.template.spec"},
	{"ReplicaSet.apps", "spec.template.spec"},
	{"Job.batch", "spec.template.spec"},
	{"CronJob.batch", "spec.jobTemplate.spec.template.spec"},
	{"Rollout.argoproj.io", "spec.template.spec"},
	{"Service.serving.knative.dev", "spec.template.spec"},
	{"Configuration.serving.knative.dev", "spec.template.spec"},
	{"Revision.serving.knative.dev", "spec"},
	{"CloneSet.apps.kruise.io", "spec.template.spec"},
	{"StatefulSet.apps.kruise.io", "spec.template.spec"},
	{"DaemonSet.apps.kruise.io", "spec.template.spec"},
	{"ScaledJob.keda.sh", "spec.jobTargetRef.template.spec"},
	{"JobSet.jobset.x-k8s.io", "spec.replicatedJobs[].template.spec.template.spec"},
}

// evaluator runs the upstream Pod Security Standards checks, the very code
// the apiserver's PodSecurity admission runs.
var evaluator = sync.OnceValues(func() (psapolicy.Evaluator, error) {
	return psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
})

// validLevel reports whether level is "" or a Pod Security Standards level.
func validLevel(level string) bool {
	return level == "" || level == PodSecurityPrivileged || level == PodSecurityBaseline || level == PodSecurityRestricted
}

// stricter reports whether level a forbids more than b ("" is baseline).
func stricter(a, b string) bool { return levelRank(a) > levelRank(b) }

func levelRank(l string) int {
	switch l {
	case PodSecurityPrivileged:
		return 0
	case PodSecurityRestricted:
		return 2
	}
	return 1
}

// podSecurity refuses obj when a pod spec in it, or a hostPath
// PersistentVolume, breaks the level; rule names who set the level.
func (p *Policy) podSecurity(obj *unstructured.Unstructured, level, rule string) *Refusal {
	if level == PodSecurityPrivileged {
		return nil
	}
	if level == "" {
		level = PodSecurityBaseline
	}
	gk := groupKind(obj)
	if gk == "PersistentVolume" {
		if hp, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "hostPath"); found && hp != nil {
			return &Refusal{Rule: rule, Path: "spec.hostPath", Message: fmt.Sprintf("PersistentVolume mounts a host path, which Pod Security %q forbids", level)}
		}
		return nil
	}
	for _, at := range p.podSpecPaths(gk) {
		var r *Refusal
		walkPath(obj.Object, strings.Split(at, "."), "", func(spec map[string]any, meta map[string]any, path string) bool {
			r = evaluate(spec, meta, path, level, rule)
			return r == nil
		})
		if r != nil {
			return r
		}
	}
	return nil
}

// podSpecPaths returns the paths of the pod specs of kind gk.
func (p *Policy) podSpecPaths(gk string) []string {
	var out []string
	for _, list := range [][]PodSpecPath{DefaultPodSpecPaths, p.PodSpecPaths} {
		for _, s := range list {
			if s.Kind == gk {
				out = append(out, s.Path)
			}
		}
	}
	return out
}

// walkPath calls visit with each map found at fields below m (following
// every element of a "name[]" field) and the metadata map beside it; it
// stops when visit returns false.
func walkPath(m map[string]any, fields []string, at string, visit func(spec, meta map[string]any, path string) bool) bool {
	name, list := strings.CutSuffix(fields[0], "[]")
	next := name
	if at != "" {
		next = at + "." + name
	}
	v, found := m[name]
	if !found || v == nil {
		return true
	}
	if !list {
		if len(fields) == 1 {
			spec, _ := v.(map[string]any) // nil: not an object, which evaluate refuses
			meta, _ := m["metadata"].(map[string]any)
			return visit(spec, meta, next)
		}
		child, _ := v.(map[string]any)
		return child == nil || walkPath(child, fields[1:], next, visit)
	}
	items, _ := v.([]any)
	for i, item := range items {
		child, _ := item.(map[string]any)
		if child != nil && len(fields) > 1 && !walkPath(child, fields[1:], next+"["+strconv.Itoa(i)+"]", visit) {
			return false
		}
	}
	return true
}

// evaluate runs the level's checks on one pod spec; a spec that does not
// decode as a PodSpec is refused, since the check could not judge it.
// Fields a PodSpec does not have are ignored, not refused: custom kinds
// keep their own beside it (Knative's containerConcurrency), and every
// field Pod Security judges is a PodSpec field, matched by its exact name
// as the apiserver and client-go's case-sensitive decoders match it.
func evaluate(spec, meta map[string]any, path, level, rule string) *Refusal {
	var ps corev1.PodSpec
	var om metav1.ObjectMeta
	err := fmt.Errorf("not an object")
	if spec != nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &ps)
	}
	if err == nil && meta != nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(meta, &om)
	}
	if err != nil {
		return &Refusal{Rule: rule, Path: path, Message: fmt.Sprintf("the pod spec cannot be read, so Pod Security %q cannot judge it: %v", level, err)}
	}
	ev, err := evaluator()
	if err != nil {
		return &Refusal{Rule: rule, Path: path, Message: fmt.Sprintf("the Pod Security checks cannot start: %v", err)}
	}
	lv := psaapi.LevelVersion{Level: psaapi.Level(level), Version: psaapi.LatestVersion()}
	agg := psapolicy.AggregateCheckResults(ev.EvaluatePod(lv, &om, &ps))
	if agg.Allowed {
		return nil
	}
	return &Refusal{Rule: rule, Path: path, Message: fmt.Sprintf("the pod breaks Pod Security %q: %s", level, agg.ForbiddenDetail())}
}

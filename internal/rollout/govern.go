package rollout

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/render"
)

// Policies returns the set's RolloutPolicies sorted by name: the first by
// name governs a template several select.
func Policies(set *load.Set) []load.Rollout {
	out := slices.Clone(set.Rollouts)
	slices.SortFunc(out, func(a, b load.Rollout) int { return strings.Compare(a.Display(), b.Display()) })
	return out
}

// Governed returns, per template key (ObjectKey.String()), the index in
// policies of the RolloutPolicy that governs it: the first whose selectors
// match the template or, for an object a HelmChart rendered, the
// HelmChart. Templates no policy governs are absent. Templates gone from
// Git that clusters still run (the objects of before) are matched by
// those objects: removing a governed template is rolled out too.
func Governed(policies []load.Rollout, bindings []*render.Binding, before [][]*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	if len(policies) == 0 {
		return out
	}
	bound := make(map[string]bool, len(bindings))
	for _, b := range bindings {
		bound[b.Key.String()] = true
		if b.Template == nil {
			continue
		}
		objs := []*unstructured.Unstructured{b.Template.Object}
		if ch := b.Template.Chart; ch != nil {
			chart := &unstructured.Unstructured{}
			chart.SetAPIVersion(chartv1alpha1.APIVersion)
			chart.SetKind(chartv1alpha1.Kind)
			chart.SetNamespace(ch.Chart.Namespace)
			chart.SetName(ch.Chart.Name)
			objs = append(objs, chart)
		}
		if i := governing(policies, objs); i >= 0 {
			out[b.Key.String()] = i
		}
	}
	for _, objs := range before {
		for _, o := range objs {
			t := TemplateOf(o)
			if _, known := out[t]; known || bound[t] {
				continue
			}
			if i := governing(policies, []*unstructured.Unstructured{o}); i >= 0 {
				out[t] = i
			}
		}
	}
	return out
}

// governing returns the index of the first policy selecting one of objs;
// -1 for none. A policy with a namespace selects only in it.
func governing(policies []load.Rollout, objs []*unstructured.Unstructured) int {
	for i, ro := range policies {
		p := ro.Policy
		for _, obj := range objs {
			if p.Namespace != "" && obj.GetNamespace() != p.Namespace {
				continue
			}
			if len(p.Spec.ResourceSelectors) == 0 {
				return i
			}
			sels := p.Spec.ResourceSelectors
			if p.Namespace != "" {
				sels = match.DefaultNamespace(sels, p.Namespace)
			}
			if match.Selectors(sels, obj) != match.None {
				return i
			}
		}
	}
	return -1
}

// TemplateOf returns the template key a rendered object came from. It
// reads the one annotation (GetAnnotations would copy them all: this runs
// for every object of every cluster on every pass).
func TemplateOf(obj *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", workv1alpha1.AnnotationTemplate)
	return v
}

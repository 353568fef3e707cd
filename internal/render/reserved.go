package render

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
)

// overridable are the propagit.io annotations an override may set per
// cluster: the author's choices (drift mode, prune), as on a template.
var overridable = map[string]bool{
	workv1alpha1.AnnotationDrift: true,
	workv1alpha1.AnnotationPrune: true,
}

// reservedFailure refuses a rendered copy whose identity or whose
// propagit-owned fields differ from its template's. Only Git says what an
// object is (apiVersion, kind, name, namespace), and only propagit writes
// its propagit.io labels and annotations and the top-level sops section,
// which apply and prune trust: an override or a ReviseReplica script that
// could change them would move an object past the checks made on its
// template, or point it at another team's encrypted document, which the
// member would decrypt into it.
func reservedFailure(b *Binding, cluster string, obj *unstructured.Unstructured, res override.Result, overrides []load.Override) *RenderError {
	field := changedReserved(b.Template.Object, obj)
	if field == "" {
		return nil
	}
	e := &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Rule: -1, Path: field,
		Message: "may not be changed: only Git sets an object's identity, and only propagit its propagit.io labels and annotations and the sops section"}
	pointer := "/" + strings.ReplaceAll(strings.SplitN(field, "[", 2)[0], ".", "/")
	for _, c := range slices.Backward(res.Changes) {
		if strings.HasPrefix(c.Path, pointer) || strings.HasPrefix(pointer, c.Path) {
			e.Policy, e.Rule, e.Overrider = c.Policy, c.Rule, c.Overrider
			for _, o := range overrides {
				if o.Display() == c.Policy {
					e.PolicySource = o.Source
				}
			}
			return e
		}
	}
	e.Message += " (changed by the kind's ResourceInterpreterCustomization ReviseReplica script)"
	return e
}

// changedReserved names the first reserved field that differs between the
// template and its rendered copy, "" when none does.
func changedReserved(tpl, obj *unstructured.Unstructured) string {
	switch {
	case tpl.GetAPIVersion() != obj.GetAPIVersion():
		return "apiVersion"
	case tpl.GetKind() != obj.GetKind():
		return "kind"
	case tpl.GetName() != obj.GetName():
		return "metadata.name"
	case tpl.GetNamespace() != obj.GetNamespace():
		return "metadata.namespace"
	case !reflect.DeepEqual(tpl.Object["sops"], obj.Object["sops"]):
		return "sops"
	}
	for _, field := range []string{"labels", "annotations"} {
		before, _, _ := unstructured.NestedStringMap(tpl.Object, "metadata", field)
		after, _, _ := unstructured.NestedStringMap(obj.Object, "metadata", field)
		if k := changedKey(before, after, field == "annotations"); k != "" {
			return "metadata." + field + "[" + k + "]"
		}
	}
	return ""
}

// changedKey is the first propagit.io key (but the overridable annotations)
// added, removed or changed between before and after.
func changedKey(before, after map[string]string, annotations bool) string {
	var keys []string
	for _, m := range []map[string]string{before, after} {
		for k := range m {
			if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) && !(annotations && overridable[k]) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, inBefore := before[k]
		a, inAfter := after[k]
		if inBefore != inAfter || a != b {
			return k
		}
	}
	return ""
}

package load

import (
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// authorAnnotations are the propagit.io annotations a template's author
// may set: choices about the template itself. Every other propagit.io
// label and annotation is propagit's own record (the template a copy came
// from, its digest, an encrypted document, a take-over), which apply and
// prune trust; a template carrying one could make the member decrypt
// another team's document into it, or disown what it should prune.
var authorAnnotations = map[string]bool{
	workv1alpha1.AnnotationDrift: true,
	workv1alpha1.AnnotationPrune: true,
}

// reservedIssues refuses the propagit.io labels and annotations a template
// may not set. It runs before load adds its own (the SOPS document).
func reservedIssues(obj *unstructured.Unstructured) []issue {
	var out []issue
	for _, field := range []string{"labels", "annotations"} {
		m, _, _ := unstructured.NestedStringMap(obj.Object, "metadata", field)
		keys := make([]string, 0, len(m))
		for k := range m {
			if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) && (field == "labels" || !authorAnnotations[k]) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, issue{field: keyPath("metadata."+field, k), sev: sevError,
				msg: workv1alpha1.AnnotationPrefix + " " + field + " are propagit's own records and may not be set in Git " +
					"(a template may set only the annotations " + workv1alpha1.AnnotationDrift + " and " + workv1alpha1.AnnotationPrune + ")"})
		}
	}
	return out
}

// CheckRendered holds an object rendered outside Git's files (a Helm
// chart's) to what a template in Git is held to: a valid apiVersion,
// kind, name and namespace (they become paths), and none of propagit's
// own labels and annotations (they decide decryption, ownership and
// pruning).
func CheckRendered(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	var msgs []string
	if obj.GetName() == "" {
		msgs = append(msgs, "metadata.name: required")
	}
	for _, i := range append(identityIssues(gvk, obj.GetName(), obj.GetNamespace()), reservedIssues(obj)...) {
		msgs = append(msgs, i.field+": "+i.msg)
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

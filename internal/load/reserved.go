package load

import (
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

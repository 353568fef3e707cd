package override

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// labelsOrAnnotations applies one labelsOverrider or annotationsOverrider
// item (field is "labels" or "annotations") to metadata only, never to a pod
// template, as one JSON patch:
//   - add creates the map when it is missing, then sets every key,
//     overwriting existing ones;
//   - replace and remove touch only keys that exist, skipping the others
//     silently;
//   - any other operator reaches json-patch and fails there.
//
// Keys are escaped for the JSON pointer ("/" becomes "~1"). Keys are applied
// in sorted order so that the recorded changes are stable.
func (e *editor) labelsOrAnnotations(overrider, field string, o policyv1alpha1.LabelAnnotationOverrider) error {
	fields := []string{"metadata", field}
	keys := make([]string, 0, len(o.Value))
	for k := range o.Value {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ops []operation
	current, _, _ := unstructured.NestedFieldNoCopy(e.obj.Object, fields...)
	currentMap, _ := current.(map[string]any)
	for _, key := range keys {
		switch o.Operator {
		case policyv1alpha1.OpRemove, policyv1alpha1.OpReplace:
			if _, exists := currentMap[key]; !exists {
				continue
			}
		case policyv1alpha1.OpAdd:
			// Karmada creates the map outside the patch; when that fails
			// (metadata is not an object) the key is skipped.
			if _, exists, _ := unstructured.NestedStringMap(e.obj.Object, fields...); !exists {
				if err := unstructured.SetNestedStringMap(e.obj.Object, map[string]string{}, fields...); err != nil {
					continue
				}
			}
		}
		ops = append(ops, operation{
			Op:    o.Operator,
			Path:  "/metadata/" + field + "/" + escapeToken(key),
			Value: encode(o.Value[key]),
		})
	}
	return e.patch(overrider, ops)
}

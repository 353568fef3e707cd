package override

import (
	"slices"
	"strings"

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
	var canAdd *bool
	for _, key := range keys {
		switch o.Operator {
		case policyv1alpha1.OpRemove, policyv1alpha1.OpReplace:
			if _, exists := currentMap[key]; !exists {
				continue
			}
		case policyv1alpha1.OpAdd:
			// Karmada creates the map outside the patch; when that fails
			// (metadata is not an object) the key is skipped. Checked once:
			// the map's existence does not change between keys.
			if canAdd == nil {
				ok := true
				if !hasStringMap(e.obj.Object, fields...) {
					ok = unstructured.SetNestedStringMap(e.obj.Object, map[string]string{}, fields...) == nil
				}
				canAdd = &ok
			}
			if !*canAdd {
				continue
			}
		}
		ops = append(ops, operation{
			Op:    o.Operator,
			Path:  "/metadata/" + field + "/" + escapeToken(key),
			Value: encode(o.Value[key]),
		})
	}
	if m, ok := e.mapAt(fields); ok && knownOp(o.Operator) {
		e.setKeys(overrider, m, ops, o)
		return nil
	}
	return e.patch(overrider, ops)
}

// hasStringMap is the found result of unstructured.NestedStringMap (a map
// of strings is there) without copying the map.
func hasStringMap(obj map[string]any, fields ...string) bool {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	m, isMap := v.(map[string]any)
	if !found || err != nil || !isMap {
		return false
	}
	for _, x := range m {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

func knownOp(op string) bool {
	return op == policyv1alpha1.OpAdd || op == policyv1alpha1.OpReplace || op == policyv1alpha1.OpRemove
}

// mapAt returns the map at fields when it exists (add created it above).
func (e *editor) mapAt(fields []string) (map[string]any, bool) {
	v, found, _ := unstructured.NestedFieldNoCopy(e.obj.Object, fields...)
	m, ok := v.(map[string]any)
	return m, found && ok
}

// setKeys makes the label or annotation operations directly on the map —
// the same result as the JSON patch, which json-patch would reach by
// re-encoding the whole object for every key — and records each change.
func (e *editor) setKeys(overrider string, m map[string]any, ops []operation, o policyv1alpha1.LabelAnnotationOverrider) {
	for _, op := range ops {
		key := op.Path[strings.LastIndexByte(op.Path, '/')+1:]
		key = tokenUnescaper.Replace(key)
		before := ""
		if v, ok := m[key]; ok {
			before = compact(v)
		}
		after := ""
		if op.Op == policyv1alpha1.OpRemove {
			delete(m, key)
		} else {
			m[key] = o.Value[key]
			after = compact(o.Value[key])
		}
		e.edits = append(e.edits, edit{Change: Change{Policy: e.policy, Rule: e.rule, Overrider: overrider,
			Path: op.Path, Before: before, After: after}, source: e.source})
	}
}

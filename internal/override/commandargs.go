package override

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// containerFields returns the field path of the containers list of the
// workload kinds Karmada's command and args overriders know; ok is false for
// every other kind.
func containerFields(kind string) ([]string, bool) {
	switch kind {
	case "Pod":
		return []string{"spec", "containers"}, true
	case "ReplicaSet", "Deployment", "DaemonSet", "Job", "StatefulSet":
		return []string{"spec", "template", "spec", "containers"}, true
	}
	return nil, false
}

// commandArgs applies one commandOverrider or argsOverrider item (target is
// "command" or "args") to every container named o.ContainerName, as one JSON
// patch. Karmada's behaviour, kept as is:
//   - a present list is replaced by the edited list;
//   - an absent (or null) list is added, starting from [] whatever the
//     operator, so remove or an unknown operator still creates [];
//   - add appends, remove drops every element equal to a listed value, any
//     other operator keeps the list;
//   - no container with that name, or another kind, is a silent no-op.
func (e *editor) commandArgs(overrider, target string, o policyv1alpha1.CommandArgsOverrider) error {
	fields, ok := containerFields(e.obj.GetKind())
	if !ok {
		return nil
	}
	containers, found, err := unstructured.NestedSlice(e.obj.Object, fields...)
	if err != nil {
		return fmt.Errorf("failed to read containers: %w", err)
	}
	if !found {
		return nil
	}
	var ops []operation
	for i, c := range containers {
		container, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("failed to read containers[%d]: value is a %s, not an object", i, kindOf(c))
		}
		if container["name"] != o.ContainerName {
			continue
		}
		op, err := commandArgsOperation(container[target], o)
		if err != nil {
			return fmt.Errorf("failed to read containers[%d].%s: %w", i, target, err)
		}
		op.Path = fmt.Sprintf("/%s/%d/%s", strings.Join(fields, "/"), i, target)
		ops = append(ops, op)
	}
	return e.patch(overrider, ops)
}

// commandArgsOperation builds the operation for the current value of a
// container's command or args.
func commandArgsOperation(current any, o policyv1alpha1.CommandArgsOverrider) (operation, error) {
	if current == nil {
		return operation{Op: policyv1alpha1.OpAdd, Value: encode(editList([]string{}, o))}, nil
	}
	list, ok := current.([]any)
	if !ok {
		return operation{}, fmt.Errorf("value is a %s, not an array", kindOf(current))
	}
	values := make([]string, len(list))
	for i, v := range list {
		values[i] = fmt.Sprintf("%s", v) // as Karmada formats non-string elements
	}
	return operation{Op: policyv1alpha1.OpReplace, Value: encode(editList(values, o))}, nil
}

// editList applies the operator to values.
func editList(values []string, o policyv1alpha1.CommandArgsOverrider) []string {
	switch o.Operator {
	case policyv1alpha1.OpAdd:
		return append(values, o.Value...)
	case policyv1alpha1.OpRemove:
		kept := make([]string, 0, len(values))
		for _, v := range values {
			if !slices.Contains(o.Value, v) {
				kept = append(kept, v)
			}
		}
		return kept
	}
	return values
}

package override

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// field applies one fieldOverrider item: it reads the string at FieldPath,
// patches the YAML or JSON document it holds, and writes the string back.
//   - yaml: YAML to JSON, patch, JSON to YAML with sigs.k8s.io/yaml
//     (comments are lost, keys sorted, two-space indent);
//   - json: patch the text as is; the result is compact JSON, HTML
//     characters escaped, key order kept.
//
// When both lists are set only yaml is used; when neither is, the field
// becomes "" (Karmada's behaviour for a policy its webhook would reject).
func (e *editor) field(o policyv1alpha1.FieldOverrider) error {
	current, err := readString(e.obj.Object, o.FieldPath)
	if err != nil {
		return err
	}
	var next []byte
	var subPaths []string
	switch {
	case len(o.YAML) > 0:
		ops := make([]operation, len(o.YAML))
		for i, op := range o.YAML {
			ops[i] = operation{Op: op.Operator, Path: op.SubPath, Value: rawValue(op.Value)}
			subPaths = append(subPaths, op.SubPath)
		}
		if next, err = patchYAML([]byte(current), ops); err != nil {
			return err
		}
	case len(o.JSON) > 0:
		ops := make([]operation, len(o.JSON))
		for i, op := range o.JSON {
			ops[i] = operation{Op: op.Operator, Path: op.SubPath, Value: rawValue(op.Value)}
			subPaths = append(subPaths, op.SubPath)
		}
		if next, err = patchJSON([]byte(current), ops); err != nil {
			return err
		}
	}
	op := operation{Op: policyv1alpha1.OpReplace, Path: o.FieldPath, Value: encode(string(next))}
	before, insert := e.before(op)
	if err := patchObject(e.obj, op); err != nil {
		return err
	}
	e.record(overriderField, op, before, insert)
	e.edits[len(e.edits)-1].subPaths = subPaths
	return nil
}

// patchYAML converts a YAML document to JSON, patches it and converts it back.
func patchYAML(doc []byte, ops []operation) ([]byte, error) {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to convert YAML to JSON: %w", err)
	}
	if raw, err = patchJSON(raw, ops); err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to convert JSON to YAML: %w", err)
	}
	return out, nil
}

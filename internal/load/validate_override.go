package load

import (
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

var overrideOperators = []string{policyv1alpha1.OpAdd, policyv1alpha1.OpRemove, policyv1alpha1.OpReplace}

// validateOverride applies the checks of Karmada's OverridePolicy and
// ClusterOverridePolicy webhooks (semantics §1.5). present reports whether
// a field was written in the YAML.
func validateOverride(p *policyv1alpha1.OverridePolicy, present func(string) bool) []issue {
	c := &checker{}
	s := &p.Spec
	for i, rs := range s.ResourceSelectors {
		c.resourceSelector(indexPath("spec.resourceSelectors", i), rs)
	}
	legacy := s.Overriders != nil && !isEmptyOverriders(s.Overriders)
	if s.OverrideRules != nil && (s.TargetCluster != nil || legacy) {
		field := "spec.overriders"
		if s.TargetCluster != nil {
			field = "spec.targetCluster"
		}
		c.add(field, "cannot be used together with overrideRules: move it into an overrideRules entry")
	}
	for i, r := range s.OverrideRules {
		path := indexPath("spec.overrideRules", i)
		c.clusterAffinity(path+".targetCluster", r.TargetCluster)
		if !present(path + ".overriders") {
			c.add(path+".overriders", "required")
		}
		c.overriders(path+".overriders", &r.Overriders)
	}
	c.clusterAffinity("spec.targetCluster", s.TargetCluster)
	if s.Overriders != nil {
		c.overriders("spec.overriders", s.Overriders)
	}
	return c.issues
}

// isEmptyOverriders reports whether o holds no overrider. Karmada's Go
// type is a struct, so tools that marshal it write `overriders: {}`.
func isEmptyOverriders(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 &&
		len(o.ArgsOverrider) == 0 && len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 &&
		len(o.FieldOverrider) == 0
}

// overriders checks every overrider list of one rule.
func (c *checker) overriders(path string, o *policyv1alpha1.Overriders) {
	for i, pt := range o.Plaintext {
		p := indexPath(path+".plaintext", i)
		c.jsonPointer(p+".path", pt.Path)
		if pt.Operator == policyv1alpha1.OpRemove && pt.Value != nil {
			// Karmada's webhook checks no plaintext value; a JSON patch
			// remove ignores it.
			c.warn(p+".value", "is ignored: operator remove takes no value")
			continue
		}
		c.operation(p, pt.Operator, pt.Value != nil)
	}
	for i, im := range o.ImageOverrider {
		p := indexPath(path+".imageOverrider", i)
		if im.Predicate != nil {
			c.jsonPointer(p+".predicate.path", im.Predicate.Path)
		}
		if c.required(p+".component", im.Component) {
			c.oneOf(p+".component", im.Component, policyv1alpha1.ImageRegistry, policyv1alpha1.ImageRepository, policyv1alpha1.ImageTag)
		}
		c.imageOperation(p, im.Operator, im.Value)
	}
	for _, list := range []struct {
		name string
		ops  []policyv1alpha1.CommandArgsOverrider
	}{{"commandOverrider", o.CommandOverrider}, {"argsOverrider", o.ArgsOverrider}} {
		for i, ca := range list.ops {
			p := indexPath(path+"."+list.name, i)
			c.required(p+".containerName", ca.ContainerName)
			if c.required(p+".operator", ca.Operator) {
				c.oneOf(p+".operator", ca.Operator, policyv1alpha1.OpAdd, policyv1alpha1.OpRemove)
			}
		}
	}
	c.metadataOverriders(path+".labelsOverrider", o.LabelsOverrider, true)
	c.metadataOverriders(path+".annotationsOverrider", o.AnnotationsOverrider, false)
	for i, fo := range o.FieldOverrider {
		c.fieldOverrider(indexPath(path+".fieldOverrider", i), fo)
	}
}

// operation checks an add/remove/replace operator and whether a value is
// given: add and replace need one, remove must not have one.
func (c *checker) operation(path, op string, hasValue bool) {
	if !c.required(path+".operator", op) {
		return
	}
	c.oneOf(path+".operator", op, overrideOperators...)
	switch {
	case (op == policyv1alpha1.OpAdd || op == policyv1alpha1.OpReplace) && !hasValue:
		c.add(path+".value", "required when operator is %s", op)
	case op == policyv1alpha1.OpRemove && hasValue:
		c.add(path+".value", "must be empty when operator is remove")
	}
}

// imageOperation checks an imageOverrider's operator and value. Karmada's
// schema says the value "defaults to empty and ignored when operator is
// remove", and its webhook does not check it: a value next to remove is
// accepted, with a warning that it does nothing.
func (c *checker) imageOperation(path, op, value string) {
	if op == policyv1alpha1.OpRemove && value != "" {
		c.warn(path+".value", "%q is ignored: operator remove takes no value", value)
		return
	}
	c.operation(path, op, value != "")
}

// metadataOverriders checks labelsOverrider or annotationsOverrider.
func (c *checker) metadataOverriders(path string, list []policyv1alpha1.LabelAnnotationOverrider, labels bool) {
	for i, lo := range list {
		p := indexPath(path, i)
		if c.required(p+".operator", lo.Operator) {
			c.oneOf(p+".operator", lo.Operator, overrideOperators...)
		}
		for _, k := range sortedKeys(lo.Value) {
			field := keyPath(p+".value", k)
			c.labelKey(field, k)
			if labels {
				c.labelValue(field, lo.Value[k])
			}
		}
	}
}

// fieldOverrider checks a JSON or YAML field overrider: exactly one of the
// two, with valid pointers and operations.
func (c *checker) fieldOverrider(path string, fo policyv1alpha1.FieldOverrider) {
	c.jsonPointer(path+".fieldPath", fo.FieldPath)
	switch {
	case len(fo.JSON) == 0 && len(fo.YAML) == 0:
		c.add(path, "needs one of json or yaml")
	case len(fo.JSON) > 0 && len(fo.YAML) > 0:
		c.add(path, "json and yaml cannot both be set")
	}
	for i, op := range fo.JSON {
		p := indexPath(path+".json", i)
		c.jsonPointer(p+".subPath", op.SubPath)
		c.operation(p, op.Operator, op.Value != nil)
	}
	for i, op := range fo.YAML {
		p := indexPath(path+".yaml", i)
		c.jsonPointer(p+".subPath", op.SubPath)
		c.operation(p, op.Operator, op.Value != nil)
	}
}

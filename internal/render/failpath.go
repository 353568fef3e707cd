package render

import (
	"strconv"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
)

// overriderPath is the path in the object that the failing overrider of
// re works on, as its policy writes it (a plaintext path, a fieldOverrider
// fieldPath, an image predicate path, the labels or annotations); "" when
// the policy does not say.
func overriderPath(overrides []load.Override, re *override.RuleError) string {
	ov := failingOverriders(overrides, re)
	if ov == nil {
		return ""
	}
	last := re.Field[strings.LastIndex(re.Field, ".")+1:]
	name, index, _ := strings.Cut(strings.TrimSuffix(last, "]"), "[")
	i, err := strconv.Atoi(index)
	if err != nil {
		i = -1
	}
	switch name {
	case "plaintext":
		for _, p := range ov.Plaintext {
			if len(ov.Plaintext) == 1 || strings.Contains(re.Err.Error(), p.Path) {
				return p.Path
			}
		}
	case "fieldOverrider":
		if i >= 0 && i < len(ov.FieldOverrider) {
			return ov.FieldOverrider[i].FieldPath
		}
	case "imageOverrider":
		if i >= 0 && i < len(ov.ImageOverrider) && ov.ImageOverrider[i].Predicate != nil {
			return ov.ImageOverrider[i].Predicate.Path
		}
	case "labelsOverrider":
		return "/metadata/labels"
	case "annotationsOverrider":
		return "/metadata/annotations"
	}
	return ""
}

// failingOverriders returns the overriders of the rule re failed in.
func failingOverriders(overrides []load.Override, re *override.RuleError) *policyv1alpha1.Overriders {
	for _, o := range overrides {
		if o.Display() != re.Policy {
			continue
		}
		spec := o.Policy.Spec
		if strings.HasPrefix(re.Field, "overrideRules[") {
			if re.Rule >= 0 && re.Rule < len(spec.OverrideRules) {
				return &spec.OverrideRules[re.Rule].Overriders
			}
			return nil
		}
		return spec.Overriders
	}
	return nil
}

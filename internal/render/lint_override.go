package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
)

// lintOverrideFailures reports each overrider that fails against the
// OverridePolicy that holds it, at the overrider's line: the mistake is in
// the policy, not in the template. A path the template does not have is
// said in its words ("has no field spec.replica; did you mean
// spec.replicas?") instead of json-patch's ("doc is missing key"). One
// finding per overrider and message names every cluster it fails on.
func lintOverrideFailures(set *load.Set, res *Result, loc *locator) []Finding {
	type failure struct {
		src      load.Source
		msg      string
		clusters []string
	}
	var order []string
	byKey := map[string]*failure{}
	for _, b := range res.Bindings {
		for _, t := range b.Targets {
			e := t.Failure
			if e == nil || e.Policy == "" || e.Overrider == "" {
				continue
			}
			field, detail := overriderDetail(set, b, e)
			msg := fmt.Sprintf("%s: %s: %s", e.Policy, field, detail)
			f := byKey[msg]
			if f == nil {
				f = &failure{src: loc.at(e.PolicySource, "spec."+field), msg: msg}
				byKey[msg] = f
				order = append(order, msg)
			}
			f.clusters = append(f.clusters, t.Cluster)
		}
	}
	var out []Finding
	for _, k := range order {
		f := byKey[k]
		where := "cluster " + f.clusters[0] + ", which keeps its"
		if len(f.clusters) > 1 {
			where = "clusters " + strings.Join(f.clusters, ", ") + ", which keep their"
		}
		out = append(out, Finding{Severity: SeverityError, Rule: RuleOverrideFailed, Finding: load.Finding{Source: f.src,
			Message: fmt.Sprintf("%s (the override fails on %s current objects)", f.msg, where)}})
	}
	return out
}

// overriderDetail returns the failing overrider's field in the policy
// spec and what is wrong, for b's template.
func overriderDetail(set *load.Set, b *Binding, e *RenderError) (field, detail string) {
	field, detail = e.Overrider, e.Message
	if e.Path != "" {
		detail = e.Path + ": " + detail
	}
	if !strings.HasSuffix(e.Overrider, ".plaintext") {
		return field, detail + " (" + b.Key.Display() + ")"
	}
	ov := failingOverriders(set.Overrides, &override.RuleError{Policy: e.Policy, Rule: e.Rule, Field: e.Overrider})
	if ov == nil {
		return field, detail + " (" + b.Key.Display() + ")"
	}
	for i, p := range ov.Plaintext {
		if p.Path != e.Path {
			continue
		}
		field = fmt.Sprintf("%s[%d].path", e.Overrider, i)
		if why := missingField(b.Template.Object.Object, p); why != "" {
			return field + " " + p.Path, b.Key.Display() + " " + why
		}
		return field + " " + p.Path, e.Message + " (" + b.Key.Display() + ")"
	}
	return field, detail + " (" + b.Key.Display() + ")"
}

// missingField says which step of a plaintext overrider's path obj lacks
// ("has no field spec.replica; did you mean spec.replicas?"), or "" when
// the path is there (for add, its parent).
func missingField(obj map[string]any, p policyv1alpha1.PlaintextOverrider) string {
	if !strings.HasPrefix(p.Path, "/") {
		return ""
	}
	steps := strings.Split(p.Path[1:], "/")
	var cur any = obj
	at := ""
	for i, step := range steps {
		step = strings.ReplaceAll(strings.ReplaceAll(step, "~1", "/"), "~0", "~")
		if i == len(steps)-1 && p.Operator == policyv1alpha1.OpAdd {
			return ""
		}
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[step]
			if !ok {
				keys := make([]string, 0, len(c))
				for k := range c {
					keys = append(keys, k)
				}
				msg := "has no field " + joinField(at, step)
				if m := load.Closest(step, keys); m != "" {
					msg += "; did you mean " + joinField(at, m) + "?"
				}
				return msg
			}
			cur, at = v, joinField(at, step)
		case []any:
			n, err := strconv.Atoi(step)
			if err != nil || n < 0 || n >= len(c) {
				return fmt.Sprintf("has no item %s[%s]: %s holds %d", at, step, at, len(c))
			}
			cur, at = c[n], fmt.Sprintf("%s[%d]", at, n)
		default:
			return fmt.Sprintf("has no field %s: %s is not an object", joinField(at, step), at)
		}
	}
	return ""
}

func joinField(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

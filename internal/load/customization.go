package load

import (
	"errors"

	yaml "go.yaml.in/yaml/v3"

	"github.com/propagit/propagit/internal/api/configv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// customization decodes a ResourceInterpreterCustomization and compiles
// its scripts. Like Karmada's webhook it requires a target and refuses a
// script that does not compile; it also refuses one that does not define
// its operation's function (Karmada finds that out only when it runs).
// A compile error names the line of the file the Lua error is on.
func (c *collector) customization(di docInfo, n *yaml.Node) {
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	d := decodeStrict(n, ric, "")
	semantic := policyMeta(&ric.ObjectMeta, true)
	ck := &checker{}
	target := ric.Spec.Target
	if ck.required("spec.target.apiVersion", target.APIVersion) {
		ck.apiVersion("spec.target.apiVersion", target.APIVersion)
	}
	if ck.required("spec.target.kind", target.Kind) {
		if err := interpret.CheckTarget(target.APIVersion, target.Kind); err != nil {
			ck.add("spec.target.kind", "%v (Karmada allows it; propagit refuses it)", err)
		}
	}
	compiled := interpret.Customization{Name: ric.Name, APIVersion: target.APIVersion, Kind: target.Kind}
	rules := scriptsOf(&ric.Spec.Customizations)
	for _, op := range interpret.Operations {
		rule := rules[op]
		if rule == nil {
			continue
		}
		field := "spec.customizations." + string(op) + ".luaScript"
		if rule.LuaScript == "" {
			ck.add(field, "required: the Lua script defining %s", op.Function())
			continue
		}
		s, err := compileScript(ric.Name, op, rule.LuaScript, di.src.Path, scriptLine(n, op))
		if err != nil {
			var e *interpret.Error
			if errors.As(err, &e) {
				ck.issues = append(ck.issues, issue{field: field, line: e.Line, msg: e.Message})
			} else {
				ck.add(field, "%v", err)
			}
			continue
		}
		compiled.Scripts = append(compiled.Scripts, s)
	}
	if len(rules) == 0 && !d.present("spec.customizations.componentResource") {
		ck.missing("spec.customizations", "spec.customizations", "required: at least one customization (retention, replicaResource, replicaRevision, "+
			"statusReflection, statusAggregation, healthInterpretation, dependencyInterpretation)")
	}
	if ric.Spec.Customizations.ComponentResource != nil {
		ck.warn("spec.customizations.componentResource", "not supported (Karmada's multiple pod templates scheduling, alpha): ignored")
	}
	semantic = append(semantic, ck.issues...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(configv1alpha1.Group, ric.Kind, "", ric.Name))) {
		c.set.Customizations = append(c.set.Customizations, Customization{Customization: ric, Compiled: compiled, Source: di.src})
	}
}

// Interpreter runs the set's customizations.
func (s *Set) Interpreter() *interpret.Interpreter {
	cs := make([]interpret.Customization, len(s.Customizations))
	for i, c := range s.Customizations {
		cs[i] = c.Compiled
	}
	return interpret.New(interpret.DefaultLimits(), cs)
}

// compileScript compiles a script and checks that it defines its function.
func compileScript(name string, op interpret.Operation, src, file string, line int) (*interpret.Script, error) {
	s, err := interpret.Compile(name, op, src, file, line)
	if err != nil {
		return nil, err
	}
	return s, s.Check(interpret.DefaultLimits())
}

// scriptsOf maps each operation to its rule, leaving out absent ones.
func scriptsOf(r *configv1alpha1.CustomizationRules) map[interpret.Operation]*configv1alpha1.LuaScript {
	out := map[interpret.Operation]*configv1alpha1.LuaScript{}
	for op, rule := range map[interpret.Operation]*configv1alpha1.LuaScript{
		interpret.Retention:                r.Retention,
		interpret.ReplicaResource:          r.ReplicaResource,
		interpret.ReplicaRevision:          r.ReplicaRevision,
		interpret.StatusReflection:         r.StatusReflection,
		interpret.StatusAggregation:        r.StatusAggregation,
		interpret.HealthInterpretation:     r.HealthInterpretation,
		interpret.DependencyInterpretation: r.DependencyInterpretation,
	} {
		if rule != nil {
			out[op] = rule
		}
	}
	return out
}

// scriptLine is the line of the file a script's first line is on: the
// line after a block scalar's indicator (luaScript: |), else the scalar's
// own line.
func scriptLine(n *yaml.Node, op interpret.Operation) int {
	v := lookup(lookup(lookup(lookup(n, "spec"), "customizations"), string(op)), "luaScript")
	if v == nil {
		return 0
	}
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return v.Line + 1
	}
	return v.Line
}

// customizationConflicts refuses two customizations of one kind that both
// script the same operation, as Karmada's webhook does; dependency scripts
// may repeat (their results are joined).
func customizationConflicts(cs []Customization) []Problem {
	type slot struct {
		target string
		op     interpret.Operation
	}
	first := map[slot]Customization{}
	var out []Problem
	for _, c := range cs {
		for _, s := range c.Compiled.Scripts {
			if s.Operation == interpret.DependencyInterpretation {
				continue
			}
			k := slot{c.Compiled.APIVersion + "/" + c.Compiled.Kind, s.Operation}
			if f, dup := first[k]; dup {
				out = append(out, problemf(Source{Path: s.File, Line: s.Line}, "spec.customizations."+string(s.Operation),
					"conflicts with %s at %s: both script %s for %s", interpret.DisplayCustomization(f.Compiled.Name), f.Source, s.Operation, k.target))
				continue
			}
			first[k] = c
		}
	}
	return out
}

package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// lintSilent reports what renders to nothing without any error: a policy
// that selects no template, an override that changes nothing, a template
// no policy sends anywhere, and a fleet whose render is empty. Each is a
// typo more often than an intent (`name: ngnix`, `apiVersion: app/v1`).
// root names the fleet's folder in the finding of an empty render; helm
// says a Helm chart was found, which explains an empty render.
func lintSilent(set *load.Set, res *Result, root string, loc *locator, helm bool) []Finding {
	var out []Finding
	add := func(src load.Source, sev Severity, rule, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Rule: rule, Finding: load.Finding{Source: src, Message: fmt.Sprintf(format, args...)}})
	}
	selected := map[string]bool{}
	objects := 0
	for _, b := range res.Bindings {
		if b.Template.Chart != nil {
			selected[b.Template.Chart.Claim.Display()] = true
		}
		for _, c := range b.Choice.Candidates {
			selected[c.Policy.Display()] = true
		}
		for _, t := range b.Targets {
			if t.Object != nil {
				objects++
			}
		}
		if b.Policy == nil && b.Skipped == "" && !b.Unclaimed && len(b.Targets) == 0 && len(b.DependencyOf) == 0 && !autoPropagated(b.Template) {
			add(b.Template.Source, SeverityWarning, RuleUnselected, "%s is selected by no PropagationPolicy or ClusterPropagationPolicy: it is sent to no cluster", b.Key.Display())
		}
	}
	if res.Charts != nil {
		for _, b := range res.Charts.Charts {
			for _, c := range b.Choice.Candidates {
				selected[c.Policy.Display()] = true
			}
			if b.Policy == nil && b.Skipped == "" {
				add(b.Template.Source, SeverityWarning, RuleUnselected, "%s is selected by no PropagationPolicy or ClusterPropagationPolicy: its chart is rendered for no cluster", b.Key.Display())
			}
		}
		for _, f := range res.Charts.Failed {
			add(f.Source, SeverityError, RuleRenderFailed, "%s on cluster %s: %s (the cluster keeps its current objects)", f.Template.Display(), f.Cluster, f.Message)
		}
		for _, key := range slices.SortedFunc(maps.Keys(res.Charts.Hooks), workv1alpha1.ObjectKey.Compare) {
			src := chartSource(res.Charts, key)
			for _, h := range res.Charts.Hooks[key] {
				add(src, SeverityWarning, RuleHelmHook, "%s: Helm hook %s is not applied: propagit does not run Helm hooks (render it as an ordinary object, or run it another way)", key.Display(), h)
			}
		}
	}
	for i := range set.Propagations {
		p := &set.Propagations[i]
		if !selected[p.Display()] {
			hints, field := selectorHints(set, p.Policy.Spec.ResourceSelectors)
			add(loc.at(p.Source, field), SeverityWarning, RuleSelectsNothing, "%s selects no template%s", p.Display(), hints)
			continue
		}
		// The policy selects something, but one of its selectors may be
		// a typo all the same (a Deployment `ngnix` beside its Service).
		for j, sel := range p.Policy.Spec.ResourceSelectors {
			if hint, f := selectorHint(set, sel); hint != "" {
				add(loc.at(p.Source, fmt.Sprintf("spec.resourceSelectors[%d].%s", j, f)), SeverityWarning, RuleSelectsNothing,
					"%s: resourceSelectors[%d] (%s %s%s) selects no template: %s", p.Display(), j, sel.APIVersion, sel.Kind, nameSuffix(sel.Name), hint)
			}
		}
	}
	out = append(out, lintUnusedOverrides(set, res, loc)...)
	out = append(out, lintUndeclaredNamespaces(res, loc)...)
	if objects == 0 && !helm && !slices.ContainsFunc(out, func(f Finding) bool { return f.Severity == SeverityError }) && !hasErrors(res) {
		add(load.Source{Path: root}, SeverityError, RuleEmptyRender, "the fleet renders no object for any cluster (%d templates, %d policies, %d clusters loaded): check that the files are Kubernetes YAML, that Clusters are declared and that a policy selects the templates",
			len(set.Templates), len(set.Propagations), len(set.Clusters))
	}
	return out
}

// hasErrors reports whether some template failed to schedule or render:
// an empty render is then their doing, and they are reported.
func hasErrors(res *Result) bool {
	for _, b := range res.Bindings {
		if b.ScheduleError != "" || b.DependencyError != "" {
			return true
		}
		for _, t := range b.Targets {
			if t.Error != "" {
				return true
			}
		}
	}
	return false
}

// autoPropagated reports whether a template goes to every cluster without
// a policy: Namespaces do (namespace auto-propagation).
func autoPropagated(t *load.Template) bool {
	return t.Object.GetKind() == "Namespace" && t.Object.GetAPIVersion() == "v1"
}

// lintUnusedOverrides flags override policies that changed no rendered
// object for any cluster. One that failed is reported as such, not here.
func lintUnusedOverrides(set *load.Set, res *Result, loc *locator) []Finding {
	used := map[string]bool{}
	usedName := map[string]bool{}
	bindings := res.Bindings
	if res.Charts != nil {
		bindings = slices.Concat(bindings, res.Charts.Charts)
	}
	for _, b := range bindings {
		for _, t := range b.Targets {
			if t.Failure != nil && t.Failure.Policy != "" {
				used[t.Failure.Policy] = true
			}
			if t.Overrides == nil {
				continue
			}
			for _, c := range t.Overrides.Changes {
				used[c.Policy] = true
			}
			for _, a := range slices.Concat(t.Overrides.Overrides, t.Overrides.ClusterOverrides) {
				usedName[a.PolicyName] = true
			}
		}
	}
	var out []Finding
	for _, o := range set.Overrides {
		name := o.Display()
		if used[name] || usedName[o.Policy.Name] {
			continue
		}
		hints, field := selectorHints(set, o.Policy.Spec.ResourceSelectors)
		out = append(out, Finding{Severity: SeverityWarning, Rule: RuleOverrideUnused, Finding: load.Finding{Source: loc.at(o.Source, field),
			Message: name + " changes no object on any cluster" + hints}})
	}
	return out
}

// selectorHints says, for each resource selector that matches no template
// by apiVersion, kind and name, what the fleet has that is close: the
// likeliest typos are a group (app/v1), a kind's case, or a name. field is
// where the first hint points (the selector's name, apiVersion or kind),
// else the resource selectors.
func selectorHints(set *load.Set, sels []policyv1alpha1.ResourceSelector) (hints, field string) {
	var all []string
	field = "spec.resourceSelectors"
	for i, s := range sels {
		if hint, f := selectorHint(set, s); hint != "" {
			if len(all) == 0 {
				field = fmt.Sprintf("spec.resourceSelectors[%d].%s", i, f)
			}
			all = append(all, fmt.Sprintf("resourceSelectors[%d] (%s %s%s): %s", i, s.APIVersion, s.Kind, nameSuffix(s.Name), hint))
		}
	}
	if len(all) == 0 {
		return "", field
	}
	return ": " + strings.Join(all, "; "), field
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " " + name
}

// selectorHint returns "" when the selector's apiVersion, kind and name
// match a template (its namespace or labels then are what differ), else a
// suggestion and the selector field it is about.
func selectorHint(set *load.Set, s policyv1alpha1.ResourceSelector) (hint, field string) {
	var kinds, versions, names []string
	for _, t := range set.Templates {
		o := t.Object
		if !strings.EqualFold(o.GetKind(), s.Kind) {
			kinds = append(kinds, o.GetKind())
			continue
		}
		if o.GetKind() != s.Kind {
			return fmt.Sprintf("no template is of kind %s; did you mean %s?", s.Kind, o.GetKind()), "kind"
		}
		if o.GetAPIVersion() != s.APIVersion {
			versions = append(versions, o.GetAPIVersion())
			continue
		}
		if s.Name == "" || o.GetName() == s.Name {
			return "", ""
		}
		names = append(names, o.GetName())
	}
	switch {
	case len(names) > 0:
		if m := load.Closest(s.Name, names); m != "" {
			return fmt.Sprintf("no %s is named %s; did you mean %s?", s.Kind, s.Name, m), "name"
		}
		return fmt.Sprintf("no %s is named %s", s.Kind, s.Name), "name"
	case len(versions) > 0:
		return fmt.Sprintf("no %s has apiVersion %s; did you mean %s?", s.Kind, s.APIVersion, versions[0]), "apiVersion"
	}
	if m := load.Closest(s.Kind, kinds); m != "" {
		return fmt.Sprintf("no template is of kind %s; did you mean %s?", s.Kind, m), "kind"
	}
	return fmt.Sprintf("no template is of kind %s", s.Kind), "kind"
}

// lintUndeclaredNamespaces notes, once per namespace at its first template,
// a namespace that objects are sent to but no Namespace in the fleet
// declares: apply creates it on each member, unmanaged (never updated or
// pruned), which is seldom what the author had in mind.
func lintUndeclaredNamespaces(res *Result, loc *locator) []Finding {
	// The namespaces every cluster has.
	declared := map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}
	for _, b := range res.Bindings {
		if autoPropagated(b.Template) || b.Template.Object.GetKind() == "Namespace" {
			declared[b.Template.Object.GetName()] = true
		}
	}
	var out []Finding
	for _, b := range res.Bindings {
		ns := b.Template.Object.GetNamespace()
		if ns == "" || declared[ns] || len(b.Targets) == 0 {
			continue
		}
		declared[ns] = true // once
		out = append(out, Finding{Severity: SeverityInfo, Rule: RuleUndeclaredNS, Finding: load.Finding{Source: loc.at(b.Template.Source, "metadata.namespace"), Message: fmt.Sprintf(
			"namespace %s is declared by no Namespace in the fleet: apply creates it on each member unmanaged (never updated or pruned); add a Namespace to manage it", ns)}})
	}
	return out
}

// chartSource is where the HelmChart of key is declared.
func chartSource(rep *ChartReport, key workv1alpha1.ObjectKey) load.Source {
	for _, b := range rep.Charts {
		if b.Key == key {
			return b.Template.Source
		}
	}
	return load.Source{}
}

package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// Severity ranks a lint finding.
type Severity string

// The severities, from the most to the least serious.
const (
	// SeverityError: the commit would not do what it says (a template
	// fails to render for a cluster, which keeps its current objects).
	SeverityError Severity = "error"
	// SeverityWarning: it does something Karmada users rarely mean.
	SeverityWarning Severity = "warning"
	// SeverityInfo: worth knowing.
	SeverityInfo Severity = "info"
)

// rank orders severities: higher is more serious; 0 for an unknown one.
func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as serious as min.
func (s Severity) AtLeast(min Severity) bool { return min.rank() > 0 && s.rank() >= min.rank() }

// ParseSeverity validates a severity name.
func ParseSeverity(s string) (Severity, error) {
	if sev := Severity(s); sev.rank() > 0 {
		return sev, nil
	}
	return "", fmt.Errorf("unknown severity %q: want error, warning or info", s)
}

// Finding is one lint finding: where, how serious, what, and the rule
// (one of the Rule constants) it comes from.
type Finding struct {
	load.Finding
	Severity Severity
	Rule     string
}

// String renders "path:line: severity: message".
func (f Finding) String() string {
	return f.Source.String() + ": " + string(f.Severity) + ": " + f.Message
}

// Lint returns the findings of `propagit lint`, each naming a file and line,
// in a stable order.
func Lint(set *load.Set, res *Result) []Finding { return LintWith(set, res, LintOptions{}) }

// LintWith is Lint with the checks opts turns on.
func LintWith(set *load.Set, res *Result, opts LintOptions) []Finding {
	loc := newLocator(opts.ReadFile)
	out := lintSecrets(res, opts)
	out = append(out, lintLoadFindings(set)...)
	helm := slices.ContainsFunc(out, func(f Finding) bool { return f.Rule == RuleHelmChart })
	for _, b := range res.Bindings {
		out = append(out, lintBinding(b, res)...)
	}
	out = append(out, lintOverrideFailures(set, res, loc)...)
	for _, f := range lintCustomizations(set, res) {
		f.Rule = RuleInterpreterScript
		out = append(out, f)
	}
	out = append(out, lintCustomFields(set, loc)...)
	out = append(out, lintSilent(set, res, opts.Root, loc, helm)...)
	out = append(out, lintClusterNames(set, loc)...)
	for _, p := range set.Propagations {
		if m, ok := p.Policy.Annotations[workv1alpha1.AnnotationDrift]; ok && !validDriftMode(m) {
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleDriftAnnotation, Finding: load.Finding{Source: loc.at(p.Source, "metadata.annotations."+workv1alpha1.AnnotationDrift), Message: fmt.Sprintf(
				"%s: annotation %s=%q is not one of correct, warn, ignore; drift is corrected",
				p.Display(), workv1alpha1.AnnotationDrift, m)}})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.Source.Path, b.Source.Path); c != 0 {
			return c
		}
		return a.Source.Line - b.Source.Line
	})
	return out
}

func lintBinding(b *Binding, res *Result) []Finding {
	src := b.Template.Source
	var out []Finding
	addAs := func(sev Severity, rule, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Rule: rule, Finding: load.Finding{Source: src, Message: fmt.Sprintf(format, args...)}})
	}
	add := func(rule, format string, args ...any) { addAs(SeverityWarning, rule, format, args...) }
	if b.Skipped != "" && !strings.HasPrefix(b.Skipped, `namespace "default"`) {
		add(RuleSkippedNamespace, "%s: %s", b.Key.Display(), b.Skipped)
	}
	if len(b.Choice.Candidates) > 1 {
		var names []string
		for _, c := range b.Choice.Candidates {
			names = append(names, fmt.Sprintf("%s (%s)", c.Policy.Display(), c.Policy.Source))
		}
		add(RuleManyPolicies, "%s is selected by %d policies; only %s applies: %s", b.Key.Display(), len(names), policyName(b.Policy), strings.Join(names, ", "))
	}
	switch {
	case b.ScriptFailed:
		addAs(SeverityError, RuleUnschedulable, "%s cannot be scheduled: %s", b.Key.Display(), b.ScheduleError)
	case b.ScheduleError != "":
		add(RuleUnschedulable, "%s cannot be scheduled: %s", b.Key.Display(), b.ScheduleError)
	}
	if b.DependencyError != "" {
		addAs(SeverityError, RuleDependencies, "%s: its dependencies are not propagated: %s", b.Key.Display(), b.DependencyError)
	}
	if b.AlsoAutoPropagated {
		add(RuleAutoPropagated, "%s is placed by %s, but namespace auto-propagation also sends it to every cluster; label it %s: \"true\" to place it by the policy only",
			b.Key.Display(), policyName(b.Policy), workv1alpha1.LabelSkipAutoPropagation)
	}
	if m, set := b.Template.Object.GetAnnotations()[workv1alpha1.AnnotationDrift]; set && !validDriftMode(m) {
		add(RuleDriftAnnotation, "%s: annotation %s=%q is not one of correct, warn, ignore; drift is corrected", b.Key.Display(), workv1alpha1.AnnotationDrift, m)
	}
	if unknownCapacity(b, res) {
		addAs(SeverityInfo, RuleUnknownCapacity, "%s uses dynamic or aggregated division but some candidate clusters declare no status.resourceSummary: their capacity counts as 0 until the controller measures it", b.Key.Display())
	}
	for _, t := range b.Targets {
		switch {
		case t.Failure != nil && t.Failure.Policy != "" && t.Failure.Overrider != "":
			// reported at the policy: lintOverrideFailures
		case t.Failure != nil:
			addAs(SeverityError, RuleRenderFailed, "%s on cluster %s: %s (the cluster keeps its current objects)", b.Key.Display(), t.Cluster, t.Error)
		case t.Error != "":
			add(RuleRenderFailed, "%s on cluster %s: %s", b.Key.Display(), t.Cluster, t.Error)
		}
		out = append(out, lintOverlaps(b, t)...)
	}
	return out
}

func validDriftMode(m string) bool { return m == "correct" || m == "warn" || m == "ignore" }

// lintOverlaps flags two override rules writing one path for one cluster.
func lintOverlaps(b *Binding, t *Target) []Finding {
	writers := map[string][]string{}
	var paths []string
	for _, c := range t.changes() {
		who := fmt.Sprintf("%s rule %d", c.Policy, c.Rule)
		if _, seen := writers[c.Path]; !seen {
			paths = append(paths, c.Path)
		}
		if !slices.Contains(writers[c.Path], who) {
			writers[c.Path] = append(writers[c.Path], who)
		}
	}
	var out []Finding
	for _, p := range paths {
		if w := writers[p]; len(w) > 1 {
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleOverrideOverlap, Finding: load.Finding{Source: b.Template.Source, Message: fmt.Sprintf(
				"%s on cluster %s: %s is written by %d override rules (the last wins): %s", b.Key.Display(), t.Cluster, p, len(w), strings.Join(w, ", "))}})
		}
	}
	return out
}

func unknownCapacity(b *Binding, res *Result) bool {
	if b.Choice.Winner == nil || b.Decision == nil || !b.Decision.Workload {
		return false
	}
	rs := b.Choice.Winner.Policy.Policy.Spec.Placement.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingDuplicated {
		return false
	}
	dynamic := rs.ReplicaDivisionPreference == policyv1alpha1.DivisionAggregated ||
		(rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "")
	if !dynamic {
		return false
	}
	for _, c := range res.Clusters {
		if c.Status == nil || c.Status.ResourceSummary == nil {
			return true
		}
	}
	return false
}

package render

import (
	"strings"

	"github.com/propagit/propagit/internal/load"
)

// Rule ids name what a finding is about; they are stable, for CI tools
// that suppress or count findings by rule (SARIF's ruleId, JSON's rule).
const (
	RuleLoad              = "load"
	RuleUnknownField      = "unknown-field"
	RuleHelmChart         = "helm-chart"
	RuleHelmHook          = "helm-hook"
	RuleUnsupportedKind   = "unsupported-kind"
	RuleSkippedNamespace  = "skipped-namespace"
	RuleManyPolicies      = "selected-by-many"
	RuleUnschedulable     = "unschedulable"
	RuleDependencies      = "dependencies"
	RuleAutoPropagated    = "auto-propagated"
	RuleDriftAnnotation   = "drift-annotation"
	RuleUnknownCapacity   = "unknown-capacity"
	RuleRenderFailed      = "render-failed"
	RuleOverrideFailed    = "override-failed"
	RuleOverrideOverlap   = "override-overlap"
	RuleUnselected        = "unselected-template"
	RuleSelectsNothing    = "selects-nothing"
	RuleOverrideUnused    = "override-unused"
	RuleUndeclaredNS      = "undeclared-namespace"
	RuleEmptyRender       = "empty-render"
	RuleUnknownCluster    = "unknown-cluster"
	RulePlainSecret       = "plain-secret"
	RuleSecretRecipient   = "secret-recipient"
	RuleInterpreterScript = "interpreter-script"
	// The RolloutPolicy rules (internal/rollout's Lint).
	RuleRolloutSelectsNothing = "rollout-selects-nothing"
	RuleRolloutShadowed       = "rollout-shadowed"
	RuleRolloutEmptyWave      = "rollout-empty-wave"
)

// RuleDescriptions says in one line what each rule reports.
var RuleDescriptions = map[string]string{
	RuleLoad:                  "A document was not loaded (not a Kubernetes object, an excerpt, an earlier render).",
	RuleUnknownField:          "A field the kind does not have (its Go type, or its CRD's schema): the API server drops it.",
	RuleHelmChart:             "A Helm chart no HelmChart names, or Helm placeholders outside a chart: nothing of it is deployed.",
	RuleHelmHook:              "A Helm hook of a chart: propagit does not run Helm hooks, so it is not applied.",
	RuleUnsupportedKind:       "A Karmada kind propagit does not implement.",
	RuleSkippedNamespace:      "A template in a namespace that is never propagated.",
	RuleManyPolicies:          "A template selected by more than one policy: only one applies.",
	RuleUnschedulable:         "A template that cannot be scheduled.",
	RuleDependencies:          "A template whose dependencies are not propagated.",
	RuleAutoPropagated:        "A template placed by a policy and also by namespace auto-propagation.",
	RuleDriftAnnotation:       "A drift annotation that is not correct, warn or ignore.",
	RuleUnknownCapacity:       "Dynamic division over clusters whose capacity is unknown.",
	RuleRenderFailed:          "A template that fails to render for a cluster, which keeps its current objects.",
	RuleOverrideFailed:        "An overrider that fails (a path the template does not have): the cluster keeps its current objects.",
	RuleOverrideOverlap:       "Two override rules writing one path of one object for one cluster.",
	RuleUnselected:            "A template no policy sends to any cluster.",
	RuleSelectsNothing:        "A policy whose resource selectors select no template.",
	RuleOverrideUnused:        "An override policy that changes no object on any cluster.",
	RuleUndeclaredNS:          "A namespace objects are sent to that no Namespace in the fleet declares.",
	RuleEmptyRender:           "The fleet renders no object for any cluster.",
	RuleUnknownCluster:        "A cluster named in a policy that no Cluster declares.",
	RulePlainSecret:           "A Secret that is not SOPS-encrypted while encryption is required.",
	RuleSecretRecipient:       "An encrypted object sent to a cluster that cannot decrypt it.",
	RuleInterpreterScript:     "A resource interpreter script that fails on a template.",
	RuleRolloutSelectsNothing: "A RolloutPolicy that governs no template: no rollout starts from it.",
	RuleRolloutShadowed:       "A template two RolloutPolicies select: only the first by name rolls it out.",
	RuleRolloutEmptyWave:      "A RolloutPolicy wave that takes no declared cluster: it is skipped.",
}

// loadRule classifies a finding of the loader.
func loadRule(f load.Finding) string {
	switch {
	case load.IsHelmFinding(f):
		return RuleHelmChart
	case strings.Contains(f.Message, ": unknown field"):
		return RuleUnknownField
	case strings.HasPrefix(f.Message, "unsupported Karmada kind"):
		return RuleUnsupportedKind
	}
	return RuleLoad
}

// lintLoadFindings turns the loader's findings into lint findings: a Helm
// chart is an error (nothing of it is deployed), the rest warnings.
func lintLoadFindings(set *load.Set) []Finding {
	out := make([]Finding, 0, len(set.Findings))
	for _, f := range set.Findings {
		sev, rule := SeverityWarning, loadRule(f)
		if rule == RuleHelmChart {
			sev = SeverityError
		}
		out = append(out, Finding{Finding: f, Severity: sev, Rule: rule})
	}
	return out
}

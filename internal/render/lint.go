package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// Lint returns the findings of `propagit lint`, each naming a file and line,
// in a stable order.
func Lint(set *load.Set, res *Result) []load.Finding {
	var out []load.Finding
	out = append(out, set.Findings...)
	for _, b := range res.Bindings {
		out = append(out, lintBinding(b, res)...)
	}
	out = append(out, lintClusterNames(set)...)
	for _, p := range set.Propagations {
		if m, ok := p.Policy.Annotations[workv1alpha1.AnnotationDrift]; ok && !validDriftMode(m) {
			out = append(out, load.Finding{Source: p.Source, Message: fmt.Sprintf(
				"%s: annotation %s=%q is not one of correct, warn, ignore; drift is corrected",
				policyName(&PolicyRef{ClusterScoped: p.ClusterScoped, Namespace: p.Policy.Namespace, Name: p.Policy.Name}), workv1alpha1.AnnotationDrift, m)})
		}
	}
	slices.SortStableFunc(out, func(a, b load.Finding) int {
		if c := strings.Compare(a.Source.Path, b.Source.Path); c != 0 {
			return c
		}
		return a.Source.Line - b.Source.Line
	})
	return out
}

func lintBinding(b *Binding, res *Result) []load.Finding {
	src := b.Template.Source
	var out []load.Finding
	add := func(format string, args ...any) {
		out = append(out, load.Finding{Source: src, Message: fmt.Sprintf(format, args...)})
	}
	if b.Skipped != "" && !strings.HasPrefix(b.Skipped, `namespace "default"`) {
		add("%s: %s", b.Key, b.Skipped)
	}
	if len(b.Choice.Candidates) > 1 {
		var names []string
		for _, c := range b.Choice.Candidates {
			names = append(names, fmt.Sprintf("%s (%s)", policyName(&PolicyRef{ClusterScoped: c.Policy.ClusterScoped,
				Namespace: c.Policy.Policy.Namespace, Name: c.Policy.Policy.Name}), c.Policy.Source))
		}
		add("%s is selected by %d policies; only %s applies: %s", b.Key, len(names), policyName(b.Policy), strings.Join(names, ", "))
	}
	if b.ScheduleError != "" {
		add("%s cannot be scheduled: %s", b.Key, b.ScheduleError)
	}
	if m, set := b.Template.Object.GetAnnotations()[workv1alpha1.AnnotationDrift]; set && !validDriftMode(m) {
		add("%s: annotation %s=%q is not one of correct, warn, ignore; drift is corrected", b.Key, workv1alpha1.AnnotationDrift, m)
	}
	if unknownCapacity(b, res) {
		add("%s uses dynamic or aggregated division but some candidate clusters declare no status.resourceSummary: their capacity counts as 0 until the controller measures it", b.Key)
	}
	for _, t := range b.Targets {
		if t.Error != "" {
			add("%s on cluster %s: %s", b.Key, t.Cluster, t.Error)
		}
		out = append(out, lintOverlaps(b, t)...)
	}
	return out
}

func validDriftMode(m string) bool { return m == "correct" || m == "warn" || m == "ignore" }

// lintOverlaps flags two override rules writing one path for one cluster.
func lintOverlaps(b *Binding, t *Target) []load.Finding {
	writers := map[string][]string{}
	var paths []string
	for _, c := range t.Overrides.Changes {
		who := fmt.Sprintf("%s rule %d", c.Policy, c.Rule)
		if _, seen := writers[c.Path]; !seen {
			paths = append(paths, c.Path)
		}
		if !slices.Contains(writers[c.Path], who) {
			writers[c.Path] = append(writers[c.Path], who)
		}
	}
	var out []load.Finding
	for _, p := range paths {
		if w := writers[p]; len(w) > 1 {
			out = append(out, load.Finding{Source: b.Template.Source, Message: fmt.Sprintf(
				"%s on cluster %s: %s is written by %d override rules (the last wins): %s", b.Key, t.Cluster, p, len(w), strings.Join(w, ", "))})
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

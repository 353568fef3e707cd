package render

import (
	"fmt"
	"slices"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/schedule"
)

// Explanation is a Binding in words and plain data: what `propagit explain`
// prints and what `-o json` emits.
type Explanation struct {
	// Rollout says how a new revision of the template reaches its
	// clusters when a RolloutPolicy governs it (internal/rollout fills it
	// in); nil when none does.
	Rollout  *RolloutExplanation `json:"rollout,omitempty"`
	Template string              `json:"template"`
	Source   string              `json:"source"`
	Skipped  string              `json:"skipped,omitempty"`
	// Unclaimed says that no policy claims the template any more and that
	// it keeps running where it was recorded.
	Unclaimed     string              `json:"unclaimed,omitempty"`
	Policy        string              `json:"policy,omitempty"`
	PolicyReason  string              `json:"policyReason,omitempty"`
	Candidates    []CandidateVerdict  `json:"candidates,omitempty"`
	DependencyOf  []string            `json:"dependencyOf,omitempty"`
	Terms         []TermVerdict       `json:"terms,omitempty"`
	ScheduleError string              `json:"scheduleError,omitempty"`
	KeptPrevious  bool                `json:"keptPrevious,omitempty"`
	Steps         []string            `json:"replicaSteps,omitempty"`
	Evictions     []string            `json:"evictions,omitempty"`
	Targets       []TargetExplanation `json:"targets"`
	// Chart is set for an object a Helm chart rendered.
	Chart *ChartExplanation `json:"chart,omitempty"`
}

// ChartExplanation says which HelmChart rendered an object: the chart
// and version, the chart file, and per cluster what its overrides
// changed in the HelmChart (its values) or why the chart failed there.
type ChartExplanation struct {
	HelmChart string              `json:"helmChart"`
	Release   string              `json:"release,omitempty"`
	Template  string              `json:"template"`
	Values    map[string][]string `json:"values,omitempty"`
	Failed    map[string]string   `json:"failed,omitempty"`
}

// CandidateVerdict is one matching policy.
type CandidateVerdict struct {
	Policy   string `json:"policy"`
	Priority int32  `json:"priority"`
	Match    string `json:"match"`
}

// TermVerdict is the per-cluster verdict of one affinity term.
type TermVerdict struct {
	AffinityName string           `json:"affinityName,omitempty"`
	Clusters     []ClusterVerdict `json:"clusters"`
	Error        string           `json:"error,omitempty"`
}

// ClusterVerdict says whether a cluster was kept and why not.
type ClusterVerdict struct {
	Name    string `json:"name"`
	Kept    bool   `json:"kept"`
	Verdict string `json:"verdict"`
}

// TargetExplanation is one cluster of the placement.
type TargetExplanation struct {
	Cluster   string `json:"cluster"`
	Replicas  *int32 `json:"replicas,omitempty"`
	Suspended bool   `json:"suspended,omitempty"`
	Error     string `json:"error,omitempty"`
	// Kept says why the cluster keeps the object last recorded ("" when
	// the object is rendered from Git).
	Kept    string   `json:"kept,omitempty"`
	Changes []string `json:"overrides,omitempty"`
}

// UnclaimedMessage is how explain, diff and status describe an unclaimed
// template.
const UnclaimedMessage = "unclaimed: no policy selects it; it keeps running where it was"

// What Explain says of a kept object.
const (
	KeptRenderError = "render error: the cluster keeps its current objects"
	KeptUnclaimed   = "unclaimed: kept as last recorded"
)

// Explain turns b into an Explanation.
func Explain(b *Binding, clusters []*clusterv1alpha1.Cluster) Explanation {
	e := Explanation{Template: b.Key.String(), Source: b.Template.Source.String(), Skipped: b.Skipped,
		PolicyReason: b.Choice.Reason, DependencyOf: b.DependencyOf, ScheduleError: b.ScheduleError, KeptPrevious: b.KeptPrevious}
	if b.Choice.Winner != nil {
		e.Policy = policyName(b.Policy)
	}
	if b.Unclaimed {
		e.Unclaimed = UnclaimedMessage
	}
	if o := b.Template.Chart; o != nil {
		e.Chart = &ChartExplanation{HelmChart: o.Chart.String(), Release: o.Release, Template: o.Template, Values: o.Values}
		if len(o.Failed) > 0 {
			e.Chart.Failed = o.Failed
		}
	}
	for _, c := range b.Choice.Candidates {
		ref := &PolicyRef{ClusterScoped: c.Policy.ClusterScoped, Namespace: c.Policy.Policy.Namespace, Name: c.Policy.Policy.Name}
		e.Candidates = append(e.Candidates, CandidateVerdict{Policy: policyName(ref), Priority: c.Explicit, Match: c.Implicit.String()})
	}
	if b.Decision != nil {
		e.Steps = b.Decision.Steps
		if by := b.Decision.InterpretedBy; by != "" {
			e.Steps = append([]string{fmt.Sprintf("replicas %d and per-replica requests read by GetReplicas of %s", b.Decision.Replicas, by)}, e.Steps...)
		}
		for _, term := range b.Decision.Terms {
			e.Terms = append(e.Terms, termVerdict(term, b.Decision, clusters))
		}
	}
	for _, ev := range b.Evictions {
		line := fmt.Sprintf("evicted from %s at %s (%s), purge mode %s", ev.Cluster, ev.Since.UTC().Format("2006-01-02T15:04:05Z"), ev.Reason, ev.PurgeMode)
		switch {
		case ev.Ended != "":
			line += ", ended (" + ev.Ended + "): old copy removed"
		case !ev.Until.IsZero():
			line += ", old copy kept until " + ev.Until.UTC().Format("2006-01-02T15:04:05Z") + " or until the new placement is healthy"
		}
		e.Evictions = append(e.Evictions, line)
	}
	workload := b.Decision != nil && b.Decision.Workload
	for _, t := range b.Targets {
		te := TargetExplanation{Cluster: t.Cluster, Suspended: t.Suspended, Error: t.Error}
		switch {
		case t.Kept && t.Error != "":
			te.Kept = KeptRenderError
		case t.Kept:
			te.Kept = KeptUnclaimed
		}
		if (workload && t.Scheduled) || (b.Unclaimed && keptReplicas(t)) {
			r := t.Replicas
			te.Replicas = &r
		}
		for _, c := range t.changes() {
			te.Changes = append(te.Changes, fmt.Sprintf("%s rule %d %s %s: %s → %s", c.Policy, c.Rule, c.Overrider, c.Path, orAbsent(c.Before), orAbsent(c.After)))
		}
		e.Targets = append(e.Targets, te)
	}
	return e
}

func termVerdict(term schedule.TermTrace, d *schedule.Decision, clusters []*clusterv1alpha1.Cluster) TermVerdict {
	tv := TermVerdict{AffinityName: term.AffinityName, Error: term.Err}
	succeeded := term.Err == "" && term.AffinityName == d.AffinityName
	for _, c := range clusters {
		v := ClusterVerdict{Name: c.Name}
		switch reason, filtered := term.Filtered[c.Name]; {
		case filtered:
			v.Verdict = "filtered: " + reason
		case succeeded && !slices.ContainsFunc(d.Clusters, func(tc schedule.TargetCluster) bool { return tc.Name == c.Name }):
			v.Kept, v.Verdict = true, "passed the filters; not selected (spread constraints, weights or 0 replicas)"
		default:
			v.Kept, v.Verdict = true, "kept"
		}
		tv.Clusters = append(tv.Clusters, v)
	}
	return tv
}

// policyName is how messages name the propagation policy p refers to,
// "" for none.
func policyName(p *PolicyRef) string {
	if p == nil {
		return ""
	}
	return load.PolicyDisplay(policyv1alpha1.KindPropagationPolicy, p.ClusterScoped, p.Namespace, p.Name)
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// keptReplicas reports whether a kept copy records scheduled replicas.
func keptReplicas(t *Target) bool {
	if !t.Kept || t.Object == nil {
		return false
	}
	_, ok := t.Object.GetAnnotations()[workv1alpha1.AnnotationScheduledReplicas]
	return ok
}

// RolloutExplanation is the RolloutPolicy governing a template and the
// waves its clusters fall in, in order.
type RolloutExplanation struct {
	Policy    string        `json:"policy"`
	OnFailure string        `json:"onFailure"`
	Waves     []RolloutWave `json:"waves"`
}

// RolloutWave is one wave and the template's clusters in it.
type RolloutWave struct {
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
}

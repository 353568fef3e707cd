package rollout

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// Lint reports the silent mistakes of the RolloutPolicies: one that
// governs no template (its rollout never starts), a template another
// policy governs first (this one's waves never apply to it), and a wave
// that takes no declared cluster (a misspelled name or label).
func Lint(set *load.Set, res *render.Result) []render.Finding {
	policies := Policies(set)
	if len(policies) == 0 {
		return nil
	}
	var out []render.Finding
	add := func(src load.Source, sev render.Severity, rule, format string, args ...any) {
		out = append(out, render.Finding{Severity: sev, Rule: rule, Finding: load.Finding{Source: src, Message: fmt.Sprintf(format, args...)}})
	}
	gov := Governed(policies, res.Bindings, nil)
	count := make([]int, len(policies))
	for _, i := range gov {
		count[i]++
	}
	for _, b := range res.Bindings {
		if b.Template == nil {
			continue
		}
		i, ok := gov[b.Key.String()]
		if !ok {
			continue
		}
		for j, other := range policies {
			if j != i && governing([]load.Rollout{other}, []*unstructured.Unstructured{b.Template.Object}) == 0 {
				add(other.Source, render.SeverityWarning, render.RuleRolloutShadowed, "%s also selects %s, which %s governs (the first by name): its waves do not apply to it",
					other.Display(), b.Key.Display(), policies[i].Display())
			}
		}
	}
	names := make([]string, 0, len(res.Clusters))
	for _, cl := range res.Clusters {
		names = append(names, cl.Name)
	}
	for i, ro := range policies {
		if count[i] == 0 {
			add(ro.Source, render.SeverityWarning, render.RuleRolloutSelectsNothing, "%s governs no template: no rollout starts from it (check its resourceSelectors and namespace)", ro.Display())
		}
		waveNames, of := Waves(ro.Policy, res.Clusters)
		taken := make([]int, len(waveNames))
		for _, w := range of {
			taken[w]++
		}
		for w, wave := range ro.Policy.Spec.Waves {
			if taken[w] == 0 {
				add(ro.Source, render.SeverityWarning, render.RuleRolloutEmptyWave, "%s: wave %q takes no cluster (the fleet declares %s): it is skipped",
					ro.Display(), wave.Name, strings.Join(names, ", "))
			}
		}
	}
	return out
}

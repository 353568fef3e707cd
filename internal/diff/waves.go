package diff

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/rollout"
)

// WavePlan is how a RolloutPolicy at head rolls the change out: the
// clusters whose objects of its templates change, wave by wave, in order.
type WavePlan struct {
	Policy string `json:"policy"`
	// Waves lists the waves that have clusters to change, in order.
	Waves []PlannedWave `json:"waves"`
	// OnFailure is what a failed wave does: Halt or Rollback.
	OnFailure string `json:"onFailure"`
}

// PlannedWave is one wave of a plan.
type PlannedWave struct {
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
}

// wavePlans groups the changed entries of every cluster by the
// RolloutPolicy governing their template and by wave.
func wavePlans(in Input, all [][]*entry) []WavePlan {
	policies := rollout.Policies(&load.Set{Rollouts: in.Rollouts})
	if len(policies) == 0 || in.Head == nil {
		return []WavePlan{}
	}
	var before [][]*unstructured.Unstructured
	if in.Base != nil {
		for _, w := range in.Base.Works {
			before = append(before, w.Objects)
		}
	}
	gov := rollout.Governed(policies, in.Head.Bindings, before)
	changed := make([]map[string]bool, len(policies))
	for _, entries := range all {
		for _, e := range entries {
			obj := e.head
			if obj == nil {
				obj = e.base
			}
			i, ok := gov[rollout.TemplateOf(obj)]
			if !ok {
				continue
			}
			if changed[i] == nil {
				changed[i] = map[string]bool{}
			}
			changed[i][e.cluster] = true
		}
	}
	out := []WavePlan{}
	for i, ro := range policies {
		if len(changed[i]) == 0 {
			continue
		}
		names, of := rollout.Waves(ro.Policy, in.Head.Clusters)
		plan := WavePlan{Policy: ro.Display(), OnFailure: string(ro.Policy.Spec.Action())}
		for w, name := range names {
			var cs []string
			for c := range changed[i] {
				if of[c] == w {
					cs = append(cs, c)
				}
			}
			if len(cs) > 0 {
				slices.Sort(cs)
				plan.Waves = append(plan.Waves, PlannedWave{Name: name, Clusters: cs})
			}
		}
		out = append(out, plan)
	}
	return out
}

// waveLine is one plan in one line: "canary: 2 clusters → eu: 40 → rest:
// 958", with the clusters named when a wave has few.
func (p WavePlan) waveLine(quote func(string) string) string {
	var parts []string
	for _, w := range p.Waves {
		n := fmt.Sprintf("%d", len(w.Clusters))
		if len(w.Clusters) <= 3 {
			n = listNames(w.Clusters, 3, quote)
		}
		parts = append(parts, fmt.Sprintf("%s: %s", quote(w.Name), n))
	}
	return strings.Join(parts, " → ")
}

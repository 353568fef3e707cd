package rollout

import (
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// Explain returns how a new revision of b's template reaches the clusters
// it is placed on: the RolloutPolicy governing it and its clusters wave by
// wave; nil when no policy governs it.
func Explain(set *load.Set, b *render.Binding, clusters []*clusterv1alpha1.Cluster) *render.RolloutExplanation {
	policies := Policies(set)
	i, ok := Governed(policies, []*render.Binding{b}, nil)[b.Key.String()]
	if !ok {
		return nil
	}
	p := policies[i]
	names, of := Waves(p.Policy, clusters)
	out := &render.RolloutExplanation{Policy: p.Display(), OnFailure: string(p.Policy.Spec.Action())}
	for w, name := range names {
		var cs []string
		for _, t := range b.Targets {
			if wi, ok := of[t.Cluster]; ok && wi == w {
				cs = append(cs, t.Cluster)
			}
		}
		if len(cs) > 0 {
			out.Waves = append(out.Waves, render.RolloutWave{Name: name, Clusters: cs})
		}
	}
	return out
}

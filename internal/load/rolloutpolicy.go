package load

import (
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
)

// Rollout is a RolloutPolicy.
type Rollout struct {
	Policy *rolloutv1alpha1.RolloutPolicy
	Source Source
}

// Display names the policy in messages: RolloutPolicy.propagit.io/ns/name.
func (r Rollout) Display() string {
	return describe(rolloutv1alpha1.Group, rolloutv1alpha1.Kind, r.Policy.Namespace, r.Policy.Name)
}

// rolloutPolicy decodes a RolloutPolicy. One without a namespace governs
// templates of every namespace; one with a namespace, only its own.
func (c *collector) rolloutPolicy(di docInfo, n *yaml.Node) {
	p := &rolloutv1alpha1.RolloutPolicy{}
	d := decodeStrict(n, p, "")
	semantic := policyMeta(&p.ObjectMeta, p.Namespace == "")
	semantic = append(semantic, validateRollout(p)...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(rolloutv1alpha1.Group, p.Kind, p.Namespace, p.Name))) {
		c.set.Rollouts = append(c.set.Rollouts, Rollout{Policy: p, Source: di.src})
	}
}

// validateRollout checks a RolloutPolicy's fields on their own.
func validateRollout(p *rolloutv1alpha1.RolloutPolicy) []issue {
	c := &checker{}
	for i, rs := range p.Spec.ResourceSelectors {
		c.resourceSelector(indexPath("spec.resourceSelectors", i), rs)
	}
	if len(p.Spec.Waves) == 0 {
		c.missing("spec.waves", "spec.waves", "required: list at least one wave")
	}
	names := map[string]bool{rolloutv1alpha1.RestWave: true}
	for i, w := range p.Spec.Waves {
		path := indexPath("spec.waves", i)
		if c.required(path+".name", w.Name) {
			if names[w.Name] {
				c.add(path+".name", "%q is taken (%q names the clusters in no wave)", w.Name, rolloutv1alpha1.RestWave)
			}
			names[w.Name] = true
		}
		if w.ClusterAffinity == nil {
			c.missing(path+".clusterAffinity", path+".clusterAffinity", "required: say which clusters the wave takes")
		} else {
			c.clusterAffinity(path+".clusterAffinity", w.ClusterAffinity)
		}
		c.scaled(path+".maxConcurrent", w.MaxConcurrent, true)
		if w.SoakTime != nil && w.SoakTime.Duration < 0 {
			c.add(path+".soakTime", "must not be negative")
		}
		if w.Gate != nil {
			switch {
			case w.Gate.Prometheus == nil:
				c.add(path+".gate", "name a check: prometheus")
			case w.Gate.Prometheus.Query == "":
				c.add(path+".gate.prometheus.query", "required")
			case len(w.Gate.Prometheus.Query) > maxGateQuery:
				c.add(path+".gate.prometheus.query", "is %d bytes, more than %d", len(w.Gate.Prometheus.Query), maxGateQuery)
			}
		}
	}
	if p.Spec.ProgressDeadline != nil && p.Spec.ProgressDeadline.Duration <= 0 {
		c.add("spec.progressDeadline", "must be positive")
	}
	c.scaled("spec.maxFailures", p.Spec.MaxFailures, false)
	c.oneOf("spec.onFailure", string(p.Spec.OnFailure), string(rolloutv1alpha1.Halt), string(rolloutv1alpha1.Rollback))
	return c.issues
}

// maxGateQuery bounds a gate's query (promgate.MaxQuery leaves room for
// the cluster's name).
const maxGateQuery = 4000

// scaled checks a number-or-percentage: not negative, and positive when
// positive is set.
func (c *checker) scaled(field string, v *intstr.IntOrString, positive bool) {
	if v == nil {
		return
	}
	n, err := rolloutv1alpha1.Scaled(v, 100, true, 0)
	switch {
	case err != nil:
		c.add(field, "%v", err)
	case positive && n == 0:
		c.add(field, "must be at least 1 (or a percentage above 0%%)")
	}
}

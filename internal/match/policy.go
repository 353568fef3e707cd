package match

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// Candidate is one propagation policy that selects a template.
type Candidate struct {
	Policy   *load.Propagation
	Explicit int32
	Implicit Priority
}

// Key names the policy the way Karmada's claim annotations do:
// "namespace/name" for a PropagationPolicy, "name" for a cluster-scoped one.
func (c Candidate) Key() string {
	if c.Policy.ClusterScoped {
		return c.Policy.Policy.Name
	}
	return c.Policy.Policy.Namespace + "/" + c.Policy.Policy.Name
}

// Choice is the outcome of policy matching for one template.
type Choice struct {
	// Winner is the chosen policy; nil when nothing matched.
	Winner *Candidate
	// Candidates is every matching policy, winner first, in precedence order.
	Candidates []Candidate
	// Reason says in words why the winner won.
	Reason string
}

// Claim identifies a policy that previously claimed a template (Karmada's
// sticky claim): Kind is PropagationPolicy or ClusterPropagationPolicy.
type Claim struct {
	ClusterScoped bool
	Namespace     string
	Name          string
}

// Policies picks the propagation policy for obj among policies, with
// Karmada's precedence: any matching PropagationPolicy in obj's namespace
// beats every ClusterPropagationPolicy; within a kind the highest explicit
// priority wins, then the highest implicit priority, then the smallest name.
// If claim names a policy that still matches, it keeps the template (Karmada
// does not re-pick a claimed template unless preemption is on).
// Cluster-scoped templates (namespaced false) are only matched by
// ClusterPropagationPolicies.
func Policies(obj *unstructured.Unstructured, namespaced bool, policies []load.Propagation, claim *Claim) Choice {
	var pps, cpps []Candidate
	for i := range policies {
		p := &policies[i]
		sels := p.Policy.Spec.ResourceSelectors
		if !p.ClusterScoped {
			if !namespaced || p.Policy.Namespace != obj.GetNamespace() {
				continue
			}
			sels = DefaultNamespace(sels, p.Policy.Namespace)
		} else if !namespaced {
			sels = slices.DeleteFunc(slices.Clone(sels), func(s policyv1alpha1.ResourceSelector) bool { return s.Namespace != "" })
		}
		prio := Selectors(sels, obj)
		if prio == None {
			continue
		}
		c := Candidate{Policy: p, Implicit: prio}
		if p.Policy.Spec.Priority != nil {
			c.Explicit = *p.Policy.Spec.Priority
		}
		if p.ClusterScoped {
			cpps = append(cpps, c)
		} else {
			pps = append(pps, c)
		}
	}
	sortCandidates(pps)
	sortCandidates(cpps)
	all := append(pps, cpps...)
	if len(all) == 0 {
		return Choice{Reason: "no PropagationPolicy or ClusterPropagationPolicy selects it"}
	}
	if claim != nil {
		for i, c := range all {
			if c.Policy.ClusterScoped == claim.ClusterScoped && c.Policy.Policy.Name == claim.Name &&
				(claim.ClusterScoped || c.Policy.Policy.Namespace == claim.Namespace) {
				ordered := append([]Candidate{c}, slices.Delete(slices.Clone(all), i, i+1)...)
				return Choice{Winner: &ordered[0], Candidates: ordered, Reason: "it claimed the template earlier (Karmada keeps a claimed template with its policy)"}
			}
		}
	}
	return Choice{Winner: &all[0], Candidates: all, Reason: reason(all)}
}

func sortCandidates(cs []Candidate) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		if c := cmp.Compare(b.Explicit, a.Explicit); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Implicit, a.Implicit); c != 0 {
			return c
		}
		return cmp.Compare(a.Policy.Policy.Name, b.Policy.Policy.Name)
	})
}

func reason(all []Candidate) string {
	w := all[0]
	if len(all) == 1 {
		return "it is the only policy that selects the template"
	}
	r := all[1]
	switch {
	case !w.Policy.ClusterScoped && r.Policy.ClusterScoped:
		return "a PropagationPolicy in the template's namespace beats every ClusterPropagationPolicy"
	case w.Explicit != r.Explicit:
		return "highest explicit priority"
	case w.Implicit != r.Implicit:
		return "same explicit priority; more specific selector (" + w.Implicit.String() + ")"
	default:
		return "same priorities; smallest name"
	}
}

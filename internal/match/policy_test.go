package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

func deployment(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

type policyMod func(*load.Propagation)

func policy(name string, clusterScoped bool, mods ...policyMod) load.Propagation {
	p := load.Propagation{ClusterScoped: clusterScoped, Policy: &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{
			{APIVersion: "apps/v1", Kind: "Deployment"}}},
	}}
	if !clusterScoped {
		p.Policy.Namespace = "default"
	}
	for _, m := range mods {
		m(&p)
	}
	return p
}

func priority(n int32) policyMod { return func(p *load.Propagation) { p.Policy.Spec.Priority = &n } }

func byName(name string) policyMod {
	return func(p *load.Propagation) { p.Policy.Spec.ResourceSelectors[0].Name = name }
}

func byLabel(k, v string) policyMod {
	return func(p *load.Propagation) {
		p.Policy.Spec.ResourceSelectors[0].LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
}

func inNamespace(ns string) policyMod { return func(p *load.Propagation) { p.Policy.Namespace = ns } }

func TestPolicies(t *testing.T) {
	web := deployment("default", "web", map[string]string{"app": "web"})
	tests := []struct {
		name     string
		policies []load.Propagation
		claim    *Claim
		want     string // winner name, "" for none
	}{
		{"no policy matches", []load.Propagation{policy("p", false, byName("other"))}, nil, ""},
		{"explicit priority beats implicit", []load.Propagation{
			policy("by-name", false, byName("web")), policy("by-kind", false, priority(5))}, nil, "by-kind"},
		{"name match beats labelSelector at equal priority", []load.Propagation{
			policy("a-label", false, byLabel("app", "web")), policy("z-name", false, byName("web"))}, nil, "z-name"},
		{"labelSelector beats kind only", []load.Propagation{
			policy("a-kind", false), policy("b-label", false, byLabel("app", "web"))}, nil, "b-label"},
		{"smallest name breaks ties", []load.Propagation{policy("b", false), policy("a", false)}, nil, "a"},
		{"namespaced policy beats cluster policy whatever the priority", []load.Propagation{
			policy("cpp", true, priority(100), byName("web")), policy("pp", false)}, nil, "pp"},
		{"policy in another namespace is ignored", []load.Propagation{
			policy("other-ns", false, inNamespace("prod")), policy("cpp", true)}, nil, "cpp"},
		{"non-matching label selector", []load.Propagation{policy("p", false, byLabel("app", "db"))}, nil, ""},
		{"claim keeps the template with its policy", []load.Propagation{
			policy("high", false, priority(10)), policy("claimer", false)},
			&Claim{Namespace: "default", Name: "claimer"}, "claimer"},
		{"claim of a policy that no longer matches is ignored", []load.Propagation{
			policy("high", false, priority(10)), policy("claimer", false, byName("other"))},
			&Claim{Namespace: "default", Name: "claimer"}, "high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Policies(web, true, tt.policies, tt.claim)
			name := ""
			if got.Winner != nil {
				name = got.Winner.Policy.Policy.Name
			}
			if diff := cmp.Diff(tt.want, name); diff != "" {
				t.Errorf("winner (-want +got):\n%s\nreason: %s", diff, got.Reason)
			}
		})
	}
}

func TestPoliciesClusterScopedTemplate(t *testing.T) {
	role := &unstructured.Unstructured{}
	role.SetAPIVersion("rbac.authorization.k8s.io/v1")
	role.SetKind("ClusterRole")
	role.SetName("reader")
	sel := func(ns string) policyMod {
		return func(p *load.Propagation) {
			p.Policy.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: ns}}
		}
	}
	got := Policies(role, false, []load.Propagation{
		policy("pp", false, sel("")), policy("with-ns", true, sel("default")), policy("cpp", true, sel("")),
	}, nil)
	if got.Winner == nil || got.Winner.Policy.Policy.Name != "cpp" || len(got.Candidates) != 1 {
		t.Fatalf("want only cpp to select a cluster-scoped template, got %+v", got.Candidates)
	}
}

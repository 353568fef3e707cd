package render_test

import (
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/restrict"
)

// bindingFor grants the built-in group group the ClusterRole view.
func bindingFor(group string) string {
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: readers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: ` + group + `}
`
}

// bindingsPolicy sends every ClusterRoleBinding to m1 and m2.
const bindingsPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: bindings}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding}
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
`

// A commit that widens a binding to every authenticated caller is refused
// by the default restriction policy: each member keeps the binding it ran,
// the refusal is a render error naming the rule and the field, and a
// policy (outside the repository) that allows it lets it through.
func TestRestrictionPolicyRefusesAdminBindings(t *testing.T) {
	files := safetyFleet(t)
	files["rbac.yaml"] = bindingFor("team-readers")
	files["rbac-policy.yaml"] = bindingsPolicy
	base := renderFiles(t, files, nil)
	if len(base.Errors) != 0 {
		t.Fatalf("a team binding is allowed; errors %v", errorSummary(base))
	}
	files["rbac.yaml"] = bindingFor("system:authenticated")
	head := renderFiles(t, files, render.PreviousFromWorks(base.Works))
	if len(head.Errors) != 2 {
		t.Fatalf("errors %v, want one per member", errorSummary(head))
	}
	for _, e := range head.Errors {
		if !e.Kept || e.Path != "subjects[0]" || !strings.Contains(e.Message, restrict.DenyAdminBindings) {
			t.Errorf("error %+v: want kept, at subjects[0], naming %s", e, restrict.DenyAdminBindings)
		}
	}
	for _, w := range head.Works {
		for _, o := range w.Objects {
			if o.GetKind() != "ClusterRoleBinding" {
				continue
			}
			subjects := o.Object["subjects"].([]any)
			if got := subjects[0].(map[string]any)["name"]; got != "team-readers" {
				t.Errorf("%s runs a binding for %v, want the one it ran (team-readers)", w.Cluster, got)
			}
		}
	}

	opts := render.DefaultOptions()
	opts.Restrictions = &restrict.Policy{Allow: []string{restrict.DenyAdminBindings}}
	allowed := render.Render(render.Input{Set: loadFiles(t, files, nil), Options: opts, Previous: render.PreviousFromWorks(base.Works)})
	if len(allowed.Errors) != 0 {
		t.Fatalf("allowed by the policy: errors %v", errorSummary(allowed))
	}
}

package e2e

import (
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/restrict"
	"github.com/propagit/propagit/internal/testenv"
)

// readersBindingYAML grants the ClusterRole view to group, cluster-wide.
func readersBindingYAML(name, group string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: %s
`, name, group)
}

// bindingPolicyYAML sends ClusterRoleBinding name to cluster.
func bindingPolicyYAML(name, cluster string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: %s
spec:
  resourceSelectors:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRoleBinding
    name: %s
  placement:
    clusterAffinity:
      clusterNames: [%s]
`, name, name, cluster)
}

// TestTrustRestrictionPolicyRefusesClusterWideGrants: a commit that widens
// a ClusterRoleBinding to system:authenticated is refused under the
// default restriction policy — the member keeps the binding it ran, and
// `propagit status` names the rule — and a controller whose restriction
// policy (outside the repository) allows admin bindings lets it through.
func TestTrustRestrictionPolicyRefusesClusterWideGrants(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 1})
	m1 := env.Members[0]
	name := randomNamespace("readers")
	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.Write(fleetDir+"/clusters/"+m1.Name+".yaml", clusterYAML(m1.Name))
	co.Write(fleetDir+"/policy.yaml", bindingPolicyYAML(name, m1.Name))
	co.Write(fleetDir+"/binding.yaml", readersBindingYAML(name, "team-readers"))
	rev1 := co.CommitPush("a team's read access")
	s := newSetup(t, remote, env.Members...)
	ctrl := startController(t, s)
	reader.waitApplied(rev1, m1.Name)
	before := clusterRoleBinding(t, m1, name)

	co.Write(fleetDir+"/binding.yaml", readersBindingYAML(name, "system:authenticated"))
	rev2 := co.CommitPush("read access for everyone")
	ctrl.waitRevision(rev2)
	eventually(t, converge, func() (bool, string) {
		rep := reader.report(t)
		for _, e := range rep.RenderErrors {
			if strings.Contains(e.Error, restrict.DenyAdminBindings) && strings.Contains(e.Error, "subjects[0]") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no refusal naming %s in status: %+v", restrict.DenyAdminBindings, rep.RenderErrors)
	})
	ctrl.waitPasses(2)
	if after := clusterRoleBinding(t, m1, name); after.ResourceVersion != before.ResourceVersion || after.Subjects[0].Name != "team-readers" {
		t.Fatalf("the member's binding changed under a refusal: subjects %v (resourceVersion %s → %s)", after.Subjects,
			before.ResourceVersion, after.ResourceVersion)
	}
	ctrl.stop()

	opts := controllerOptions()
	opts.Render.Restrictions = &restrict.Policy{Allow: []string{restrict.DenyAdminBindings}}
	startControllerOpts(t, s, opts)
	eventually(t, converge, func() (bool, string) {
		b := clusterRoleBinding(t, m1, name)
		return b.Subjects[0].Name == "system:authenticated", fmt.Sprintf("binding subjects %v", b.Subjects)
	})
}

// clusterRoleBinding reads a ClusterRoleBinding on m, failing the test when
// it is missing.
func clusterRoleBinding(t *testing.T, m *testenv.Member, name string) *rbacv1.ClusterRoleBinding {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	b, err := m.Client().RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: ClusterRoleBinding %s: %v", m.Name, name, err)
	}
	return b
}

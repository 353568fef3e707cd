package load

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/restrict"
)

const reservedPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Secret}
  placement:
    clusterAffinity: {clusterNames: [m1]}
`

// TestHostileTemplateCannotCarryPropagitRecords: the relocation attack of
// issue #25 starts with a plain Secret carrying another team's committed
// document in propagit.io/sops-document. Such a template does not load,
// nor does one setting any other propagit.io label or annotation propagit
// writes itself; the author's own choices (drift, prune) still load.
func TestHostileTemplateCannotCarryPropagitRecords(t *testing.T) {
	for _, meta := range []string{
		`annotations: {propagit.io/sops-document: "stolen: true"}`,
		`annotations: {propagit.io/adopted: "true"}`,
		`labels: {propagit.io/owner: other}`,
		`labels: {propagit.io/managed: "false"}`,
	} {
		problems := problemsOf(t, map[string]string{
			"pp.yaml": reservedPolicy,
			"secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  ` + meta + `
data: {password: c2VjcmV0}
`,
		})
		if len(problems) != 1 || !strings.HasPrefix(problems[0], "secret.yaml:") || !strings.Contains(problems[0], "propagit's own records") {
			t.Errorf("%s: problems %q, want one at secret.yaml saying propagit.io keys are propagit's", meta, problems)
		}
	}
	mustLoad(t, map[string]string{
		"pp.yaml": reservedPolicy,
		"secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations: {propagit.io/drift: warn, propagit.io/prune: disabled}
data: {password: c2VjcmV0}
`,
	})
}

const shopRestrictions = `folders:
- {path: teams/shop, namespaces: ["shop"]}
`

// TestHostileFolderPoliciesStayInTheirFolder: a folder restricted to the
// namespace shop may not change the payments team's templates through a
// policy: an OverridePolicy in namespace payments, a cluster-wide
// ClusterOverridePolicy or ClusterPropagationPolicy, an interpreter
// customization, a Cluster or ClusterTaintPolicy that would taint the
// members it shares, or a RolloutPolicy that would pause or abort their
// rollouts, each committed under teams/shop, fails the load at its file;
// the same files outside the folder load.
func TestHostileFolderPoliciesStayInTheirFolder(t *testing.T) {
	policy := loadRestrictions(t, shopRestrictions)
	attacks := map[string]string{
		"op-payments.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: scale-down, namespace: payments}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      plaintext: [{path: /spec/replicas, operator: replace, value: 0}]
`,
		"cop.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: everything}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      imageOverrider: [{component: Registry, operator: replace, value: evil.example.com}]
`,
		"cpp.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: steal}
spec:
  priority: 1000
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [m1]}
`,
		"cluster.yaml": `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: m1
  labels: {region: eu}
spec:
  syncMode: Push
  taints: [{key: evacuate, effect: NoExecute}]
`,
		"ctp.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: evict-all}
spec:
  taints: [{key: evacuate, effect: NoExecute}]
  addOnConditions:
  - {conditionType: Ready, operator: In, statusValues: ["True"]}
`,
		// A RolloutPolicy could hold back, or roll back, the payments
		// team's templates: not from teams/shop, neither fleet-wide nor in
		// their namespace.
		"rollout-all.yaml": `apiVersion: propagit.io/v1alpha1
kind: RolloutPolicy
metadata: {name: freeze}
spec:
  waves: [{name: never, clusterAffinity: {clusterNames: [nowhere]}}]
  abort: true
`,
		"rollout-payments.yaml": `apiVersion: propagit.io/v1alpha1
kind: RolloutPolicy
metadata: {name: freeze, namespace: payments}
spec:
  waves: [{name: never, clusterAffinity: {clusterNames: [nowhere]}}]
  paused: true
`,
		"ric.yaml": `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: deploy-health}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observed)
          return false
        end
`,
	}
	for file, doc := range attacks {
		in := map[string]string{"teams/shop/" + file: doc}
		_, err := LoadWith(memFS(t, in), "/src", Options{Restrictions: policy})
		var lerr *Error
		if !errors.As(err, &lerr) || len(lerr.Problems) != 1 {
			t.Errorf("%s in teams/shop: got %v, want one problem", file, err)
			continue
		}
		if p := lerr.Problems[0].String(); !strings.HasPrefix(p, "teams/shop/"+file+":") || !strings.Contains(p, "restriction policy (folders)") {
			t.Errorf("%s in teams/shop: problem %q does not name the file and the folder rule", file, p)
		}
		if _, err := LoadWith(memFS(t, map[string]string{"platform/" + file: doc}), "/src", Options{Restrictions: policy}); err != nil {
			t.Errorf("%s outside the restricted folders: %v", file, err)
		}
	}
	own := `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: mine, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      plaintext: [{path: /spec/replicas, operator: replace, value: 2}]
`
	if _, err := LoadWith(memFS(t, map[string]string{"teams/shop/op.yaml": own}), "/src", Options{Restrictions: policy}); err != nil {
		t.Errorf("an OverridePolicy in the folder's own namespace: %v", err)
	}
}

func loadRestrictions(t *testing.T, content string) *restrict.Policy {
	t.Helper()
	file := t.TempDir() + "/restrictions.yaml"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := restrict.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

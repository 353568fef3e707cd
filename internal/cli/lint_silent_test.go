package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// silentFleet is a fleet with the mistakes that used to lint clean: each
// file holds one, and silentFindings says where each must be reported.
var silentFleet = map[string]string{
	"clusters.yaml": `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member2}
`,
	"app.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: demo}
spec:
  replicaz: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers: [{name: nginx, image: nginx:1.27}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: orphan, namespace: demo}
`,
	"policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: demo}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  placement:
    clusterAffinity:
      clusterNames: [member1, membr2]
`,
	"typo-name.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: typo-name, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: ngnix}
  placement: {clusterAffinity: {clusterNames: [member1]}}
`,
	"typo-group.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: typo-group, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: app/v1, kind: Deployment}
  placement: {clusterAffinity: {clusterNames: [member1]}}
`,
	"override.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: nothing, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {tier: web}}]
`,
}

// silentFindings point at the field at fault: the misspelled entry of
// clusterNames, the selector's name or apiVersion, not the document's first
// line.
var silentFindings = []string{
	`app.yaml:5: warning: Deployment.apps/demo/nginx: spec.replicaz: unknown field (did you mean "replicas"?); the API server drops it`,
	`app.yaml:12: warning: ConfigMap/demo/orphan is selected by no PropagationPolicy or ClusterPropagationPolicy: it is sent to no cluster`,
	`override.yaml:6: warning: OverridePolicy.policy.karmada.io/demo/nothing changes no object on any cluster: resourceSelectors[0] (apps/v1 Deployment web): no Deployment is named web`,
	`policy.yaml:11: warning: PropagationPolicy.policy.karmada.io/demo/nginx: placement.clusterAffinity.clusterNames names cluster "membr2", which no Cluster declares; did you mean "member2"?`,
	`typo-group.yaml:6: warning: PropagationPolicy.policy.karmada.io/demo/typo-group selects no template: resourceSelectors[0] (app/v1 Deployment): no Deployment has apiVersion app/v1; did you mean apps/v1?`,
	`typo-name.yaml:6: warning: PropagationPolicy.policy.karmada.io/demo/typo-name selects no template: resourceSelectors[0] (apps/v1 Deployment ngnix): no Deployment is named ngnix; did you mean nginx?`,
}

// TestLintSilentMistakes: each mistake that used to pass lint ("no
// findings", exit 0) is a finding at its file and line, and lint fails.
func TestLintSilentMistakes(t *testing.T) {
	dir := t.TempDir()
	for name, content := range silentFleet {
		writeFile(t, filepath.Join(dir, name), content)
	}
	stdout, _ := runCLI(t, 1, "lint", "--source", dir)
	for _, want := range silentFindings {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("missing finding\n  %s\nin:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, ": warning: ") + strings.Count(stdout, ": error: "); n != len(silentFindings) {
		t.Errorf("%d findings, want %d:\n%s", n, len(silentFindings), stdout)
	}
	// A namespace no Namespace declares is created unmanaged: worth
	// knowing (info), said once.
	const info = "app.yaml:3: info: namespace demo is declared by no Namespace in the fleet"
	if strings.Count(stdout, ": info: ") != 1 || !strings.Contains(stdout, info) {
		t.Errorf("want one info finding %q:\n%s", info, stdout)
	}
}

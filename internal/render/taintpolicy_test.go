package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/render"
)

// conditionCluster declares a Ready cluster that reports
// KubeComponentsHealthy with the given status since at.
func conditionCluster(name, healthy string, at time.Time) string {
	return fmt.Sprintf(`---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: %s}
spec: {syncMode: Push}
status:
  conditions:
  - {type: Ready, status: "True", reason: Probe, message: probe, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: KubeComponentsHealthy, status: "%s", reason: Probe, message: probe, lastTransitionTime: "%s"}
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
`, name, healthy, at.Format(time.RFC3339))
}

// taintPolicy is the corpus' ClusterTaintPolicy with the given effect.
func taintPolicy(effect string) string {
	return `---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: kube-components}
spec:
  targetClusters: {clusterNames: [m1, m2]}
  addOnConditions:
  - {conditionType: KubeComponentsHealthy, operator: NotIn, statusValues: ["True"]}
  removeOnConditions:
  - {conditionType: KubeComponentsHealthy, operator: In, statusValues: ["True"]}
  taints:
  - {key: kube-components-unhealthy, effect: ` + effect + `}
`
}

// Karmada's ClusterTaintPolicy: a cluster whose conditions match
// addOnConditions carries the taints, and the scheduler keeps templates
// that do not tolerate them off it.
func TestClusterTaintPolicyTaintsUnhealthyClusters(t *testing.T) {
	both := pp("nginx", "  placement:\n    clusterAffinity: {clusterNames: [m1, m2]}\n")
	tolerant := pp("nginx", "  placement:\n    clusterAffinity: {clusterNames: [m1, m2]}\n    clusterTolerations:\n    - {key: kube-components-unhealthy, operator: Exists, effect: NoSchedule}\n")
	clusters := conditionCluster("m1", "False", t0) + conditionCluster("m2", "True", t0)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  map[string][]string
	}{
		{"tainted m1 is filtered", map[string]string{"c.yaml": clusters + taintPolicy("NoSchedule"), "app.yaml": nginx, "pp.yaml": both},
			map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"a toleration lets it in", map[string]string{"c.yaml": clusters + taintPolicy("NoSchedule"), "app.yaml": nginx, "pp.yaml": tolerant},
			map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"healthy clusters are not tainted", map[string]string{"c.yaml": conditionCluster("m1", "True", t0) + conditionCluster("m2", "True", t0) + taintPolicy("NoSchedule"), "app.yaml": nginx, "pp.yaml": both},
			map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := renderAt(t, t0, nil, tc.files)
			if diff := cmp.Diff(tc.want, placement(res)); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
		})
	}
	res := renderAt(t, t0, nil, map[string]string{"c.yaml": clusters + taintPolicy("NoSchedule"), "app.yaml": nginx, "pp.yaml": both})
	var got []string
	for _, c := range res.Clusters {
		for _, tt := range render.Taints(c) {
			got = append(got, c.Name+" "+tt.ToString())
		}
	}
	if diff := cmp.Diff([]string{"m1 kube-components-unhealthy:NoSchedule"}, got); diff != "" {
		t.Errorf("effective taints (-want +got):\n%s", diff)
	}
}

// A NoExecute taint from a ClusterTaintPolicy evicts, under a policy with
// failover, after the toleration's seconds counted from when the
// condition changed.
func TestClusterTaintPolicyNoExecuteEvicts(t *testing.T) {
	policy := pp("nginx", `  failover:
    cluster: {purgeMode: Directly}
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
    clusterTolerations:
    - {key: kube-components-unhealthy, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
`)
	healthy := map[string]string{"c.yaml": conditionCluster("m1", "True", t0) + conditionCluster("m2", "True", t0) + taintPolicy("NoExecute"), "app.yaml": nginx, "pp.yaml": policy}
	first := renderAt(t, t0, nil, healthy)
	prev := render.PreviousFromWorks(first.Works)
	sick := map[string]string{"c.yaml": conditionCluster("m1", "False", t0.Add(time.Minute)) + conditionCluster("m2", "True", t0) + taintPolicy("NoExecute"), "app.yaml": nginx, "pp.yaml": policy}
	if got := renderAt(t, t0.Add(time.Minute+29*time.Second), prev, sick); !cmp.Equal(placement(first), placement(got)) {
		t.Errorf("evicted within tolerationSeconds: %v", placement(got))
	}
	moved := renderAt(t, t0.Add(time.Minute+30*time.Second), prev, sick)
	if diff := cmp.Diff(map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}, placement(moved)); diff != "" {
		t.Errorf("after tolerationSeconds (-want +got):\n%s", diff)
	}
	if ev := moved.Bindings[0].Evictions; len(ev) != 1 || !strings.Contains(ev[0].Reason, "has taint kube-components-unhealthy:NoExecute") {
		t.Errorf("evictions = %+v", ev)
	}
}

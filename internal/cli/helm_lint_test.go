package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// helmFleet is a fleet releasing a chart in the repo to
// two clusters; member2's values come from an override of the HelmChart.
func helmFleet(member2Values string, job bool) map[string]string {
	files := map[string]string{
		"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/values.yaml": "replicaCount: 1\nimage: {tag: '1.27'}\n",
		"charts/web/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n" +
			"  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n      - name: web\n" +
			"        image: \"nginx:{{ required \"image.tag is required\" .Values.image.tag }}\"\n",
		"release.yaml": `apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata: {name: web, namespace: demo}
spec: {chart: charts/web}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      plaintext: [{path: /spec/values, operator: add, value: ` + member2Values + `}]
`,
	}
	if job {
		files["charts/web/templates/job.yaml"] = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: post-install}\n" +
			"spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}}\n"
	}
	for _, f := range []string{"clusters/member1.yaml", "clusters/member2.yaml", "namespaces/demo.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../examples/quickstart/fleet", f))
		if err != nil {
			panic(err)
		}
		files[f] = string(data)
	}
	return files
}

// TestHelmLint: a folder holding a chart and the HelmChart naming it
// lints clean; a chart that fails to render for one cluster is an error
// (exit 1) naming the HelmChart, the chart file and line, and the
// cluster; a Helm hook is a helm-hook warning, never silently dropped.
func TestHelmLint(t *testing.T) {
	dir := t.TempDir()
	writeFleet(t, dir, helmFleet("{replicaCount: 3}", false))
	if stdout, _ := runCLI(t, 0, "lint", dir); stdout != "no findings\n" {
		t.Errorf("clean chart fleet: %s", stdout)
	}
	dir = t.TempDir()
	writeFleet(t, dir, helmFleet("{image: {tag: ''}}", true))
	stdout, _ := runCLI(t, 1, "lint", dir)
	want := []string{
		"release.yaml:1: error: HelmChart.propagit.io/demo/web on cluster member2: charts/web/templates/deployment.yaml:11: image.tag is required (the cluster keeps its current objects)",
		"release.yaml:1: warning: HelmChart.propagit.io/demo/web: Helm hook Job migrate (post-install) from charts/web/templates/job.yaml is not applied",
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("lint output lacks %q:\n%s", w, stdout)
		}
	}
}

// TestHelmExplain: explain names, for an object a chart rendered, the
// HelmChart, the chart file and version, and what each cluster's
// overrides changed in the HelmChart's values; the HelmChart itself can
// be explained too.
func TestHelmExplain(t *testing.T) {
	dir := t.TempDir()
	writeFleet(t, dir, helmFleet("{replicaCount: 3}", false))
	stdout, _ := runCLI(t, 0, "explain", "deployment/web", dir, "-n", "demo")
	for _, w := range []string{
		"rendered by HelmChart.propagit.io/demo/web from web/templates/deployment.yaml (chart web 1.0.0)",
		`member2 values: OverridePolicy.policy.karmada.io/demo/web rule 0 plaintext /spec/values: (absent) -> {"replicaCount":3}`,
		"member2  replicas 3",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("explain lacks %q:\n%s", w, stdout)
		}
	}
	stdout, _ = runCLI(t, 0, "explain", "helmchart/web", dir, "-n", "demo")
	if !strings.HasPrefix(stdout, "HelmChart.propagit.io/demo/web  (release.yaml:1)") {
		t.Errorf("explain helmchart/web:\n%s", stdout)
	}
}

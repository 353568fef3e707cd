package charts

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// fleet is a chart in the repo, released by a HelmChart to three
// clusters; prod gets 5 replicas through an override of the HelmChart's
// values, staging a mirror registry through an imageOverrider on the
// Deployment the chart renders. prod serves policy/v1 PodDisruptionBudget;
// the chart renders one only where it is served.
func fleet(extra map[string]string) map[string]string {
	cluster := func(name, version, pdb string) string {
		return "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + "}\nspec: {syncMode: Push}\n" +
			"status:\n  kubernetesVersion: " + version + "\n  conditions: [{type: Ready, status: 'True', reason: ClusterReady, message: ok, lastTransitionTime: '2026-11-01T08:00:00Z'}]\n  apiEnablements:\n  - groupVersion: v1\n    resources: [{name: configmaps, kind: ConfigMap}]\n" +
			"  - groupVersion: apps/v1\n    resources: [{name: deployments, kind: Deployment}]\n" +
			"  - groupVersion: rbac.authorization.k8s.io/v1\n    resources: [{name: clusterrolebindings, kind: ClusterRoleBinding}]\n" + pdb
	}
	pdb := "  - groupVersion: policy/v1\n    resources: [{name: poddisruptionbudgets, kind: PodDisruptionBudget}]\n"
	files := map[string]string{
		"clusters/dev.yaml":      cluster("dev", "v1.29.4", ""),
		"clusters/staging.yaml":  cluster("staging", "v1.33.1", ""),
		"clusters/prod.yaml":     cluster("prod", "v1.33.1", pdb),
		"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/values.yaml": "replicaCount: 1\nimage: {repository: docker.io/library/nginx, tag: '1.27'}\n",
		"charts/web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  annotations:
    kube: "{{ .Capabilities.KubeVersion.Version }}"
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
      - name: web
        image: "{{ .Values.image.repository }}:{{ required "image.tag is required" .Values.image.tag }}"
`,
		"charts/web/templates/pdb.yaml": `{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}
spec:
  minAvailable: 1
{{- end }}
`,
		"apps/web/values-common.yaml": "image:\n  tag: '1.27.1'\n",
		"apps/web/release.yaml": `apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata: {name: web, namespace: demo}
spec:
  chart: ../../charts/web
  valuesFiles: [values-common.yaml]
  values: {replicaCount: 2}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}
  placement:
    clusterAffinity: {clusterNames: [dev, staging, prod]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-prod, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}
  overrideRules:
  - targetCluster: {clusterNames: [prod]}
    overriders:
      plaintext:
      - {path: /spec/values/replicaCount, operator: replace, value: 5}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-mirror, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  overrideRules:
  - targetCluster: {clusterNames: [staging]}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: mirror.example.com}
`,
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func renderFleet(t *testing.T, files map[string]string, prev *render.Previous) *render.Result {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, data := range files {
		if err := fs.WriteFile("/fleet/"+name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	set, err := load.Load(fs, "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	return render.Render(render.Input{Set: set, Previous: prev, Options: render.DefaultOptions(), Charts: New(helm.DefaultLimits(), nil).For(set)})
}

// objectOf returns the object cluster got of kind/name, nil if none.
func objectOf(r *render.Result, cluster, kind, name string) *unstructured.Unstructured {
	for _, w := range r.Works {
		if w.Cluster != cluster {
			continue
		}
		for _, o := range w.Objects {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
	}
	return nil
}

// TestHelmChartPerClusterValuesAndOverrides: each cluster gets the chart
// rendered with its own values (an override of the HelmChart), its own
// capabilities (version, APIs), and the overrides of the rendered
// objects; the HelmChart itself reaches no member.
func TestHelmChartPerClusterValuesAndOverrides(t *testing.T) {
	r := renderFleet(t, fleet(nil), nil)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	want := map[string]struct {
		replicas int64
		image    string
		kube     string
		pdb      bool
	}{
		"dev":     {2, "docker.io/library/nginx:1.27.1", "v1.29.4", false},
		"staging": {2, "mirror.example.com/library/nginx:1.27.1", "v1.33.1", false},
		"prod":    {5, "docker.io/library/nginx:1.27.1", "v1.33.1", true},
	}
	for cluster, w := range want {
		d := objectOf(r, cluster, "Deployment", "web")
		if d == nil {
			t.Fatalf("%s: no Deployment", cluster)
		}
		replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		image := containers[0].(map[string]any)["image"]
		if replicas != w.replicas || image != w.image || d.GetAnnotations()["kube"] != w.kube || d.GetNamespace() != "demo" {
			t.Errorf("%s: replicas %d image %v kube %s ns %s, want %+v", cluster, replicas, image, d.GetAnnotations()["kube"], d.GetNamespace(), w)
		}
		if d.GetAnnotations()["propagit.io/helm-chart"] != "demo/web" {
			t.Errorf("%s: annotations %v", cluster, d.GetAnnotations())
		}
		if got := objectOf(r, cluster, "PodDisruptionBudget", "web") != nil; got != w.pdb {
			t.Errorf("%s: PodDisruptionBudget rendered %v, want %v (only where the API is served)", cluster, got, w.pdb)
		}
		if objectOf(r, cluster, "HelmChart", "web") != nil {
			t.Errorf("%s: the HelmChart itself was sent", cluster)
		}
	}
}

// TestHelmChartFailureKeepsWhatRuns: a chart that fails for one cluster
// (required value emptied by that cluster's override) is one error
// naming the chart file, line and cluster; that cluster keeps every
// object the chart gave it before, the others move on.
func TestHelmChartFailureKeepsWhatRuns(t *testing.T) {
	first := renderFleet(t, fleet(nil), nil)
	prev := render.PreviousFromWorks(first.Works)
	files := fleet(nil)
	files["apps/web/release.yaml"] = strings.Replace(files["apps/web/release.yaml"], "value: 5}", "value: 5}\n      - {path: /spec/values/image, operator: add, value: {tag: ''}}", 1)
	files["apps/web/values-common.yaml"] = "image:\n  tag: '1.28'\n"
	r := renderFleet(t, files, prev)
	if len(r.Errors) != 1 {
		t.Fatalf("errors: %+v, want one", r.Errors)
	}
	e := r.Errors[0]
	if e.Cluster != "prod" || e.Template.Kind != "HelmChart" || e.Message != "charts/web/templates/deployment.yaml:13: image.tag is required" || !e.Kept {
		t.Errorf("error = %+v", e)
	}
	for _, kind := range []string{"Deployment", "PodDisruptionBudget"} {
		if objectOf(r, "prod", kind, "web") == nil {
			t.Errorf("prod lost its %s", kind)
		}
	}
	d := objectOf(r, "prod", "Deployment", "web")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if image := containers[0].(map[string]any)["image"]; image != "docker.io/library/nginx:1.27.1" {
		t.Errorf("prod runs %v, want its last good image", image)
	}
	d = objectOf(r, "dev", "Deployment", "web")
	containers, _, _ = unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if image := containers[0].(map[string]any)["image"]; image != "docker.io/library/nginx:1.28" {
		t.Errorf("dev runs %v, want the new image", image)
	}
}

// TestHelmChartObjectClashes: a chart rendering an object Git declares
// too is an error, and the object in Git wins.
func TestHelmChartObjectClashes(t *testing.T) {
	r := renderFleet(t, fleet(map[string]string{"apps/web/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: demo}\nspec: {replicas: 9}\n"}), nil)
	if len(r.Errors) != 3 || !strings.Contains(r.Errors[0].Message, "which apps/web/deploy.yaml:1 declares too") {
		t.Fatalf("errors: %+v", r.Errors)
	}
}

// TestHelmChartCannotForgeWhatGitCannot: a chart is held to what a
// template in Git is held to. One that stamps propagit's own annotations
// (the SOPS document that makes a member decrypt, the template that
// claims ownership) or names an object like a path fails to render, on
// every cluster, and nothing of it is sent.
func TestHelmChartCannotForgeWhatGitCannot(t *testing.T) {
	for name, tmpl := range map[string]string{
		"sops document": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n  annotations: {propagit.io/sops-document: x}\n",
		"ownership":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: {propagit.io/template: ConfigMap/other/x}\n",
		"managed label": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {propagit.io/managed: 'true'}\n",
		"path name":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../x\n",
	} {
		t.Run(name, func(t *testing.T) {
			r := renderFleet(t, fleet(map[string]string{"charts/web/templates/evil.yaml": tmpl}), nil)
			if len(r.Errors) != 3 {
				t.Fatalf("errors: %+v, want one per cluster", r.Errors)
			}
			for _, e := range r.Errors {
				if !strings.Contains(e.Message, "web/templates/evil.yaml") {
					t.Errorf("error does not name the template: %s", e.Message)
				}
			}
			for _, w := range r.Works {
				if len(w.Objects) > 0 {
					t.Errorf("%s got %d objects of a chart that failed", w.Cluster, len(w.Objects))
				}
			}
		})
	}
}

// TestHelmChartObjectsAreRestricted: the restriction policy sees a
// chart's objects as it sees Git's: a chart that binds cluster-admin or
// writes into kube-system is refused there, its other objects go out.
func TestHelmChartObjectsAreRestricted(t *testing.T) {
	r := renderFleet(t, fleet(map[string]string{
		"charts/web/templates/admin.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: web-admin}\n" +
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: web, namespace: demo}]\n",
		"charts/web/templates/system.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: kube-system}\n",
	}), nil)
	refused := map[string]int{}
	for _, e := range r.Errors {
		refused[e.Template.Kind]++
		if e.Source.Path != "apps/web/release.yaml" {
			t.Errorf("refusal not at the HelmChart's file: %+v", e)
		}
	}
	if refused["ClusterRoleBinding"] != 3 {
		t.Errorf("refusals %v (errors %+v), want the cluster-admin binding refused on each cluster", refused, r.Errors)
	}
	for _, c := range []string{"dev", "staging", "prod"} {
		if objectOf(r, c, "ClusterRoleBinding", "web-admin") != nil || objectOf(r, c, "Deployment", "web") == nil {
			t.Errorf("%s: the binding went out, or the Deployment did not", c)
		}
		if cm := objectOf(r, c, "ConfigMap", "web"); cm != nil && cm.GetNamespace() == "kube-system" {
			t.Errorf("%s: a chart wrote into kube-system", c)
		}
	}
}

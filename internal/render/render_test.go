package render_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/rendertest"
)

// The fixtures render/incremental's tests share (rendertest), by the
// names these tests use.
var (
	clusters     = rendertest.Clusters
	loadFiles    = rendertest.LoadFiles
	worksJSON    = rendertest.WorksJSON
	placement    = rendertest.Placement
	object       = rendertest.Object
	binding      = rendertest.Binding
	errorSummary = rendertest.ErrorSummary
	t0           = rendertest.T0
)

const nginx = rendertest.Nginx

const nginxEnv = `apiVersion: v1
kind: ConfigMap
metadata: {name: nginx-env, namespace: demo}
data: {A: "1"}
`

func pp(name, extra string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
%s`, name, extra)
}

func renderFiles(t *testing.T, files map[string]string, prev *render.Previous) *render.Result {
	t.Helper()
	return render.Render(render.Input{Set: loadFiles(t, files, nil), Options: render.DefaultOptions(), Previous: prev})
}

func TestDividedWithOverrideAndDependencies(t *testing.T) {
	res := renderFiles(t, map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"ns.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n",
		"app.yaml":      nginx + "---\n" + nginxEnv,
		"pp.yaml": pp("nginx", `  propagateDeps: true
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [m1]}, weight: 3}
        - {targetCluster: {clusterNames: [m2]}, weight: 1}
`),
		"op.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bump, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - targetCluster: {clusterNames: [m2]}
    overriders:
      imageOverrider: [{component: Registry, operator: add, value: registry.m2.example}]
`,
	}, nil)
	want := map[string][]string{
		"m1": {"Namespace.core/demo", "ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=3"},
		"m2": {"Namespace.core/demo", "ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=1"},
	}
	if diff := cmp.Diff(want, placement(res)); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
	d := object(t, res, "m2", "Deployment.apps/demo/nginx")
	img, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if got := img[0].(map[string]any)["image"]; got != "registry.m2.example/nginx:1.27" {
		t.Errorf("m2 image = %v, want the registry override", got)
	}
	for _, f := range [][]string{{"status"}, {"metadata", "uid"}, {"metadata", "resourceVersion"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(d.Object, f...); found {
			t.Errorf("%v was not pruned", f)
		}
	}
	ann := d.GetAnnotations()
	for k, v := range map[string]string{
		workv1alpha1.AnnotationTemplate: "Deployment.apps/demo/nginx", workv1alpha1.AnnotationPPName: "nginx",
		workv1alpha1.AnnotationPPNamespace: "demo", workv1alpha1.AnnotationScheduledReplicas: "1", workv1alpha1.AnnotationConflict: "abort",
	} {
		if ann[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, ann[k], v)
		}
	}
	if d.GetLabels()[workv1alpha1.LabelManaged] != "true" {
		t.Errorf("missing %s label", workv1alpha1.LabelManaged)
	}
	cm := object(t, res, "m1", "ConfigMap.core/demo/nginx-env")
	if got := cm.GetAnnotations()[workv1alpha1.AnnotationDependencyOf]; got != "Deployment.apps/demo/nginx" {
		t.Errorf("dependency-of = %q", got)
	}
}

func TestNamespacesAndSkippedTemplates(t *testing.T) {
	res := renderFiles(t, map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"ns.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: v1
kind: Namespace
metadata: {name: kube-app-prod}
---
apiVersion: v1
kind: Namespace
metadata: {name: private, labels: {namespace.karmada.io/skip-auto-propagation: "TRUE"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: kube-system}
`,
		"cpp.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: all}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
`,
	}, nil)
	want := map[string][]string{"m1": {"Namespace.core/team-a"}, "m2": {"Namespace.core/team-a"}}
	if diff := cmp.Diff(want, placement(res)); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
	skipped := map[string]bool{}
	for _, b := range res.Bindings {
		if b.Skipped != "" {
			skipped[b.Key.String()] = true
		}
	}
	for _, k := range []string{"Namespace.core/kube-app-prod", "ConfigMap.core/kube-system/c"} {
		if !skipped[k] {
			t.Errorf("%s should be skipped with a reason", k)
		}
	}
	// default and a Namespace labelled to skip auto-propagation are not
	// auto-propagated, but a ClusterPropagationPolicy could still place
	// them (TestNamespacePlacement): they are not skipped.
	for _, k := range []string{"Namespace.core/default", "Namespace.core/private"} {
		if skipped[k] {
			t.Errorf("%s should not be skipped", k)
		}
	}
}

func TestSuspendedClusterGetsNothing(t *testing.T) {
	res := renderFiles(t, map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"app.yaml":      nginx,
		"pp.yaml":       pp("nginx", "  suspension:\n    dispatchingOnClusters: {clusterNames: [m2]}\n"),
	}, nil)
	want := map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(want, placement(res)); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
}

func TestOverrideFailureSkipsOnlyThatCluster(t *testing.T) {
	res := renderFiles(t, map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"app.yaml":      nginx,
		"pp.yaml":       pp("nginx", ""),
		"op.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: broken, namespace: demo}
spec:
  overrideRules:
  - targetCluster: {clusterNames: [m1]}
    overriders:
      plaintext: [{path: /spec/missing/field, operator: replace, value: 1}]
`,
	}, nil)
	want := map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(want, placement(res)); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
	var errs []string
	for _, b := range res.Bindings {
		for _, tg := range b.Targets {
			if tg.Error != "" {
				errs = append(errs, tg.Cluster+": "+tg.Error)
			}
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "m1: ") || !strings.Contains(errs[0], "broken") {
		t.Errorf("want one error on m1 naming the policy, got %q", errs)
	}
}

func TestJobCompletionsSplitByParallelism(t *testing.T) {
	res := renderFiles(t, map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: demo}
spec:
  parallelism: 6
  completions: 10
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl}]
`,
		"pp.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pi, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [m1]}, weight: 2}
        - {targetCluster: {clusterNames: [m2]}, weight: 1}
`,
	}, nil)
	got := map[string][2]int64{}
	for _, c := range []string{"m1", "m2"} {
		j := object(t, res, c, "Job.batch/demo/pi")
		p, _, _ := unstructured.NestedInt64(j.Object, "spec", "parallelism")
		n, _, _ := unstructured.NestedInt64(j.Object, "spec", "completions")
		got[c] = [2]int64{p, n}
	}
	// parallelism 6 at 2:1 → 4/2; completions 10 by votes 4:2 → 7/3 (Webster).
	want := map[string][2]int64{"m1": {4, 7}, "m2": {2, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parallelism/completions (-want +got):\n%s", diff)
	}
}

func TestClaimIsStickyWithPrevious(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"app.yaml":      nginx,
		"pp.yaml":       pp("first", "  placement:\n    clusterAffinity: {clusterNames: [m1]}\n"),
	}
	first := renderFiles(t, files, nil)
	files["pp2.yaml"] = pp("second", "  priority: 10\n  placement:\n    clusterAffinity: {clusterNames: [m2]}\n")
	fresh := renderFiles(t, files, nil)
	if _, ok := placement(fresh)["m2"]; !ok {
		t.Fatalf("without history the higher-priority policy should win: %v", placement(fresh))
	}
	sticky := renderFiles(t, files, render.PreviousFromWorks(first.Works))
	want := map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(want, placement(sticky)); diff != "" {
		t.Errorf("with history the claiming policy keeps the template (-want +got):\n%s", diff)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": clusters("c", "a", "b"),
		"ns.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n",
		"app.yaml":      nginx + "---\n" + nginxEnv,
		"pp.yaml":       pp("nginx", "  propagateDeps: true\n  placement:\n    replicaScheduling: {}\n"),
	}
	serialize := func(res *render.Result) string {
		var b strings.Builder
		for _, w := range res.Works {
			for _, o := range w.Objects {
				y, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString(w.Cluster + "\n" + string(y))
			}
		}
		return b.String()
	}
	want := serialize(renderFiles(t, files, nil))
	for i := 0; i < 5; i++ {
		if got := serialize(renderFiles(t, files, nil)); got != want {
			t.Fatalf("render %d differs:\n%s", i, cmp.Diff(want, got))
		}
	}
	clustersSeen := []string{}
	for _, w := range renderFiles(t, files, nil).Works {
		clustersSeen = append(clustersSeen, w.Cluster)
	}
	if !slices.IsSorted(clustersSeen) {
		t.Errorf("works not sorted by cluster: %v", clustersSeen)
	}
}

// TestDriftModeFromPolicyOrTemplate: a policy's propagit.io/drift annotation
// reaches the objects it propagates, unless the template chooses its own.
func TestDriftModeFromPolicyOrTemplate(t *testing.T) {
	policy := strings.Replace(pp("nginx", "  placement: {clusterAffinity: {clusterNames: [m1]}}\n"),
		"metadata: {name: nginx, namespace: demo}", "metadata: {name: nginx, namespace: demo, annotations: {propagit.io/drift: warn}}", 1)
	for _, tc := range []struct{ template, want string }{
		{nginx, "warn"},
		{strings.Replace(nginx, "  namespace: demo\n", "  namespace: demo\n  annotations: {propagit.io/drift: ignore}\n", 1), "ignore"},
	} {
		res := renderFiles(t, map[string]string{"clusters.yaml": clusters("m1"), "app.yaml": tc.template, "pp.yaml": policy}, nil)
		got := object(t, res, "m1", "Deployment.apps/demo/nginx").GetAnnotations()[workv1alpha1.AnnotationDrift]
		if got != tc.want {
			t.Errorf("drift annotation = %q, want %q", got, tc.want)
		}
	}
}

package render_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// objectsOf returns, per cluster, the rendered object of the Deployment.
func objectsOf(res *render.Result, kind string) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, w := range res.Works {
		for _, o := range w.Objects {
			if o.GetKind() == kind {
				out[w.Cluster] = o
			}
		}
	}
	return out
}

func TestSharedObjects(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": clusters("m1", "m2", "m3", "m4"),
		"app.yaml":      nginx + "---\n" + nginxEnv,
		"pp.yaml": pp("nginx", `  placement:
    clusterAffinity: {clusterNames: [m1, m2, m3, m4]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [m1, m2, m3]}, weight: 1}
        - {targetCluster: {clusterNames: [m4]}, weight: 1}
`),
		"op.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: image, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - targetCluster: {clusterNames: [m2]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: "1.28"}]
`,
	}
	got := objectsOf(renderFiles(t, files, nil), "Deployment")
	if len(got) != 4 {
		t.Fatalf("the Deployment went to %d clusters, want 4", len(got))
	}
	if got["m1"] != got["m3"] || got["m1"] != got["m4"] {
		t.Error("m1, m3 and m4 get the same replicas and no override but not the same object")
	}
	if got["m2"] == got["m1"] {
		t.Error("m2 has its own override but shares m1's object")
	}
	if img := got["m2"].Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "nginx:1.28" {
		t.Errorf("m2's image is %v, want nginx:1.28", img)
	}
}

// TestSharedObjectsFleet renders a generated fleet and checks every
// cluster's objects against the model, and that sharing is real: the
// distinct objects are the template's variants (region and tier), not one
// per cluster.
func TestSharedObjectsFleet(t *testing.T) {
	m, err := fleet.New(40, 24)
	if err != nil {
		t.Fatal(err)
	}
	set := loadFleet(t, m)
	res := render.Render(render.Input{Set: set, Options: render.DefaultOptions()})
	distinct := map[*unstructured.Unstructured]bool{}
	total := 0
	for c, w := range res.Works {
		objs := make([]map[string]any, 0, len(w.Objects))
		for _, o := range w.Objects {
			objs = append(objs, o.Object)
			distinct[o] = true
		}
		if err := m.Check(c, objs); err != nil {
			t.Fatal(err)
		}
		total += len(objs)
	}
	if total != m.Objects() {
		t.Fatalf("rendered %d objects, want %d", total, m.Objects())
	}
	// 40 templates, each with at most 4 regions × 2 tiers variants.
	if len(distinct) > 40*8 || len(distinct) >= total/2 {
		t.Errorf("%d distinct objects for %d rendered: not shared", len(distinct), total)
	}
	// A second, memoised render gives the same bytes.
	first, err := json.Marshal(res.Works)
	if err != nil {
		t.Fatal(err)
	}
	memo := incremental.NewMemo()
	for range 2 {
		again, err := json.Marshal(memo.Render(render.Input{Set: set, Options: render.DefaultOptions()}).Works)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(first) {
			t.Fatal("a second render differs from the first")
		}
	}
}

func loadFleet(t testing.TB, m *fleet.Model) *load.Set {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	if err := m.WriteRepo(fs, "/repo"); err != nil {
		t.Fatal(err)
	}
	set, err := load.Load(fs, "/repo")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Findings) > 0 {
		t.Fatalf("loading the fleet: %s", set.Findings[0])
	}
	return set
}

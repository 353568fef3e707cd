package incremental_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// TestMemoRendersOnlyWhatChanged renders a sequence of revisions through one
// Memo and checks each against a render without it: the output is the
// same, and only templates whose inputs changed are built again.
func TestMemoRendersOnlyWhatChanged(t *testing.T) {
	files := map[string]string{"clusters.yaml": clusters("m1", "m2"), "policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement: {clusterAffinity: {clusterNames: [m1, m2]}}
`}
	for i := range 5 {
		files[fmt.Sprintf("cm%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d, namespace: demo}\ndata: {v: \"1\"}\n", i)
	}
	override := `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: label, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cm0}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {tier: gold}}}
    overriders: {labelsOverrider: [{operator: add, value: {gold: "yes"}}]}
`
	memo, cache := incremental.NewMemo(), load.NewCache()
	for _, step := range []struct {
		name         string
		change       func()
		wantRendered int
	}{
		{"first render", func() {}, 5},
		{"nothing changed", func() {}, 0},
		{"one template changed", func() { files["cm3.yaml"] = strings.Replace(files["cm3.yaml"], `"1"`, `"2"`, 1) }, 1},
		{"a file renamed: the same keys in another order", func() {
			files["z-cm0.yaml"] = files["cm0.yaml"]
			delete(files, "cm0.yaml")
		}, 0},
		{"an override policy added to the namespace", func() { files["override.yaml"] = override }, 5},
		{"the override now targets m2", func() {
			files["override.yaml"] = strings.Replace(override, "{labelSelector: {matchLabels: {tier: gold}}}", "{clusterNames: [m2]}", 1)
		}, 5},
		{"the override as before", func() { files["override.yaml"] = override }, 5},
		{"a cluster label changed", func() {
			files["clusters.yaml"] = strings.Replace(files["clusters.yaml"], "labels: {name: m2}", "labels: {name: m2, tier: gold}", 1)
		}, 5},
		{"the policy dropped a cluster", func() {
			files["policy.yaml"] = strings.Replace(files["policy.yaml"], "[m1, m2]", "[m1]", 1)
		}, 5},
	} {
		step.change()
		// Each revision twice: the second finds the templates placed and
		// settled as the first left them, and renders none.
		for pass, want := range []int{step.wantRendered, 0} {
			fresh := render.Render(render.Input{Set: loadFiles(t, files, nil), Options: render.DefaultOptions()})
			// Through a load cache, as the controller loads: templates carry
			// the digest of their document.
			got := memo.Render(render.Input{Set: loadFiles(t, files, cache), Options: render.DefaultOptions()})
			if a, b := worksJSON(t, fresh), worksJSON(t, got); a != b {
				t.Fatalf("%s (render %d): the memo changed the output:\nwithout: %s\nwith:    %s", step.name, pass+1, a, b)
			}
			if memo.Rendered != want {
				t.Errorf("%s (render %d): %d templates rendered, want %d (reused %d)", step.name, pass+1, memo.Rendered, want, memo.Reused)
			}
		}
	}
}

// TestMemoGroupsLikeAFreshRender renders a sequence of revisions through
// one Memo, each checked against a render without it. Between revisions
// with the same templates on the same clusters, the memo groups the Works
// from the last ones, replacing what the changed templates send: the steps
// change where templates go (fewer clusters, more, none), change several
// at once at both ends of the key order, and add or remove a template or a
// cluster (grouped afresh).
func TestMemoGroupsLikeAFreshRender(t *testing.T) {
	policy := func(name, spread, clusters string) string {
		return fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {spread: %s}}}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
`, name, spread, clusters)
	}
	files := map[string]string{"clusters.yaml": clusters("m1", "m2", "m3"),
		"policy.yaml": policy("all", "all", "m1, m2, m3") + policy("one", "one", "m2") + policy("two", "two", "m1, m3")}
	cm := func(i int, spread, value string) {
		files[fmt.Sprintf("cm%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d, namespace: demo, labels: {spread: %s}}\ndata: {v: %q}\n", i, spread, value)
	}
	for i := range 6 {
		cm(i, "all", "1")
	}
	memo, cache := incremental.NewMemo(), load.NewCache()
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"first render", func() {}},
		{"nothing changed", func() {}},
		{"one template changed", func() { cm(2, "all", "2") }},
		{"one template to fewer clusters", func() { cm(2, "one", "2") }},
		{"the same template to other clusters", func() { cm(2, "two", "2") }},
		{"one template to none", func() { cm(3, "none", "1") }},
		{"the first and the last templates changed", func() { cm(0, "one", "3"); cm(5, "two", "3") }},
		{"back to more clusters", func() { cm(3, "all", "4"); cm(2, "all", "4") }},
		{"a template added", func() { cm(6, "two", "1") }},
		{"a template changed after that", func() { cm(6, "all", "1") }},
		{"a template removed", func() { delete(files, "cm4.yaml") }},
		{"a template changed after that", func() { cm(1, "one", "5") }},
		{"a cluster added", func() {
			files["clusters.yaml"] = clusters("m1", "m2", "m3", "m4")
			files["policy.yaml"] = policy("all", "all", "m1, m2, m3, m4") + policy("one", "one", "m2") + policy("two", "two", "m1, m3")
		}},
		{"every template changed", func() {
			for i := range 7 {
				if i != 4 {
					cm(i, "two", "6")
				}
			}
		}},
	} {
		step.change()
		fresh := render.Render(render.Input{Set: loadFiles(t, files, nil), Options: render.DefaultOptions()})
		got := memo.Render(render.Input{Set: loadFiles(t, files, cache), Options: render.DefaultOptions()})
		if a, b := worksJSON(t, fresh), worksJSON(t, got); a != b {
			t.Fatalf("%s: the memo changed the Works:\nwithout: %s\nwith:    %s", step.name, a, b)
		}
	}
}

// BenchmarkRenderOneChange is one op = render 2,000 templates on 3
// clusters after one template changed: "full" renders everything, "memo"
// reuses what the previous revision rendered. Compare their ns/op.
func BenchmarkRenderOneChange(b *testing.B) {
	files := map[string]string{"clusters.yaml": clusters("m1", "m2", "m3")}
	for ns := range 10 {
		files[fmt.Sprintf("policy%d.yaml", ns)] = fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: ns%d}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [m1, m2, m3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`, ns)
	}
	for i := range 2000 {
		files[fmt.Sprintf("app%04d.yaml", i)] = strings.NewReplacer("nginx", fmt.Sprintf("app%04d", i), "namespace: demo", fmt.Sprintf("namespace: ns%d", i%10),
			"envFrom:\n        - configMapRef: {name: app"+fmt.Sprintf("%04d", i)+"-env}\n", "").Replace(nginx)
	}
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			b.Fatal(err)
		}
	}
	cache := load.NewCache()
	revision := func(i int) *load.Set {
		if err := fs.WriteFile("/repo/app0000.yaml", []byte(strings.Replace(files["app0000.yaml"], "replicas: 4", fmt.Sprintf("replicas: %d", 4+i%2), 1))); err != nil {
			b.Fatal(err)
		}
		set, err := cache.Load(fs, "/repo")
		if err != nil {
			b.Fatal(err)
		}
		return set
	}
	for _, mode := range []string{"full", "memo"} {
		b.Run(mode, func(b *testing.B) {
			var memo *incremental.Memo
			if mode == "memo" {
				memo = incremental.NewMemo()
				memo.Render(render.Input{Set: revision(1), Options: render.DefaultOptions()})
			}
			i := 0
			for b.Loop() {
				b.StopTimer()
				set := revision(i)
				i++
				b.StartTimer()
				res := memo.Render(render.Input{Set: set, Options: render.DefaultOptions()})
				if len(res.Works) != 3 {
					b.Fatalf("%d works, want 3", len(res.Works))
				}
			}
			if memo != nil {
				b.ReportMetric(float64(memo.Rendered), "templates-rendered/op")
			}
		})
	}
}

// TestMemoSpreadsOneTemplateLikeAFreshRender changes one template, so the
// memo renders it alone, its variants spread over the workers. The
// template has six variants on eight clusters: two fail (an override
// replaces a missing field on the gold clusters), one of them on two
// clusters. The render must equal a fresh one: the same Works, one failure
// per failing cluster, and one object shared by the clusters of a variant.
func TestMemoSpreadsOneTemplateLikeAFreshRender(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var cs strings.Builder
	for i, labels := range []string{"{tier: gold, region: east}", "{tier: silver, region: east}", "{tier: gold, region: west}",
		"{tier: silver, region: west}", "{tier: gold}", "{tier: silver}", "{tier: gold}", "{tier: silver}"} {
		fmt.Fprintf(&cs, "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m%d, labels: %s}\nspec: {syncMode: Push}\n", i+1, labels)
	}
	files := map[string]string{"clusters.yaml": cs.String(), "policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement: {clusterAffinity: {clusterNames: [m1, m2, m3, m4, m5, m6, m7, m8]}}
`, "override.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: variants, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {tier: gold}}}
    overriders:
      plaintext: [{path: /data/nope, operator: replace, value: x}]
  - targetCluster: {labelSelector: {matchLabels: {region: east}}}
    overriders:
      labelsOverrider: [{operator: add, value: {region: east}}]
  - targetCluster: {labelSelector: {matchLabels: {region: west}}}
    overriders:
      annotationsOverrider: [{operator: add, value: {region: west}}]
`}
	cm := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: demo}\ndata: {v: %q}\n", name, value)
	}
	files["a.yaml"], files["b.yaml"] = cm("a", "1"), cm("b", "1")
	memo, cache := incremental.NewMemo(), load.NewCache()
	memo.Render(render.Input{Set: loadFiles(t, files, cache), Options: render.DefaultOptions()})
	files["a.yaml"] = cm("a", "2")
	got := memo.Render(render.Input{Set: loadFiles(t, files, cache), Options: render.DefaultOptions()})
	if memo.Rendered != 1 {
		t.Fatalf("%d templates rendered, want the changed one alone", memo.Rendered)
	}
	fresh := render.Render(render.Input{Set: loadFiles(t, files, nil), Options: render.DefaultOptions()})
	if a, b := worksJSON(t, fresh), worksJSON(t, got); a != b {
		t.Fatalf("the memo changed the Works:\nwithout: %s\nwith:    %s", a, b)
	}
	wantErrors := []string{}
	for _, c := range []string{"m1", "m3", "m5", "m7"} {
		for _, tmpl := range []string{"a", "b"} {
			wantErrors = append(wantErrors, "ConfigMap.core/demo/"+tmpl+" "+c)
		}
	}
	slices.Sort(wantErrors)
	var gotErrors []string
	for _, e := range got.Errors {
		gotErrors = append(gotErrors, e.Template.String()+" "+e.Cluster)
	}
	slices.Sort(gotErrors)
	if !slices.Equal(gotErrors, wantErrors) {
		t.Errorf("errors %v, want %v", gotErrors, wantErrors)
	}
	if a, b := errorSummary(fresh), errorSummary(got); !slices.Equal(a, b) {
		t.Errorf("errors differ from a fresh render:\nwithout: %v\nwith:    %v", a, b)
	}
	objectOf := func(cluster string) any {
		for _, w := range got.Works {
			if w.Cluster == cluster {
				for _, o := range w.Objects {
					if o.GetName() == "a" {
						return o
					}
				}
			}
		}
		t.Fatalf("%s has no a", cluster)
		return nil
	}
	if objectOf("m6") != objectOf("m8") {
		t.Error("m6 and m8 get the same variant, yet two objects")
	}
	if objectOf("m2") == objectOf("m4") || objectOf("m2") == objectOf("m6") {
		t.Error("different variants share an object")
	}
}

package render_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files of the interpreter tests")

// sourceFiles reads a testdata source folder as name → content.
func sourceFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// TestCustomizationDividesACRD: a Rollout, which propagit knows nothing
// of, has replicas through its customization's GetReplicas; static weights
// 2:1 divide its 6 replicas 4/2 and ReviseReplica writes each share.
func TestCustomizationDividesACRD(t *testing.T) {
	res := renderFiles(t, sourceFiles(t, "testdata/interpret/source"), nil)
	if len(res.Errors) > 0 {
		t.Fatalf("render errors: %v", res.Errors)
	}
	for _, w := range res.Works {
		var b strings.Builder
		for _, o := range w.Objects {
			data, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(data)
		}
		golden := filepath.Join("testdata/interpret/rendered", w.Cluster+".yaml")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want), b.String()); d != "" {
			t.Errorf("%s (-want +got):\n%s", golden, d)
		}
	}
	want := map[string][]string{
		"member1": {"Rollout.argoproj.io/shop/web replicas=4"},
		"member2": {"Rollout.argoproj.io/shop/web replicas=2"},
	}
	if d := cmp.Diff(want, placement(res)); d != "" {
		t.Errorf("placement (-want +got):\n%s", d)
	}
	e := render.Explain(res.Bindings[0], res.Clusters)
	if len(e.Steps) == 0 || e.Steps[0] != `replicas 6 and per-replica requests read by GetReplicas of ResourceInterpreterCustomization.config.karmada.io/argo-rollout (ric.yaml:12)` {
		t.Errorf("explain steps = %q, want the customization that read the replicas first", e.Steps)
	}
}

// TestCustomizationScriptErrorIsARenderError: a ReviseReplica that fails is
// a render error for each cluster naming the customization, the script's
// file and line and the template; the clusters keep what they recorded.
func TestCustomizationScriptErrorIsARenderError(t *testing.T) {
	files := sourceFiles(t, "testdata/interpret/source")
	files["ric.yaml"] = strings.Replace(files["ric.yaml"], "          obj.spec.replicas = desiredReplica\n",
		"          obj.spec.replicas = desiredReplica\n          error(\"cannot revise \" .. obj.metadata.name)\n", 1)
	res := renderFiles(t, files, nil)
	if len(res.Errors) != 2 {
		t.Fatalf("errors = %v, want one per cluster", res.Errors)
	}
	got := res.Errors[0].String()
	want := `Rollout.argoproj.io/shop/web on member1: ResourceInterpreterCustomization.config.karmada.io/argo-rollout replicaRevision (ric.yaml:20): cannot revise web`
	if got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if len(res.Works) != 0 {
		t.Errorf("works = %v, want none (nothing was recorded before)", placement(res))
	}
}

// TestCustomizationGetReplicasErrorKeepsThePreviousPlacement: a failing
// GetReplicas cannot schedule; lint reports it with the script's line.
func TestCustomizationGetReplicasErrorIsReported(t *testing.T) {
	files := sourceFiles(t, "testdata/interpret/source")
	files["ric.yaml"] = strings.Replace(files["ric.yaml"], "return obj.spec.replicas or 1,", "return obj.spec.missing.replicas,", 1)
	set := loadFiles(t, files, nil)
	res := render.Render(render.Input{Set: set, Options: render.DefaultOptions()})
	b := res.Bindings[0]
	if !strings.Contains(b.ScheduleError, `ResourceInterpreterCustomization.config.karmada.io/argo-rollout replicaResource (ric.yaml:14): attempt to index`) {
		t.Errorf("schedule error = %q", b.ScheduleError)
	}
	var lint []string
	for _, f := range render.Lint(set, res) {
		lint = append(lint, f.String())
	}
	if len(lint) != 1 || !strings.HasPrefix(lint[0], "rollout.yaml:1: error: Rollout.argoproj.io/shop/web cannot be scheduled: ResourceInterpreterCustomization") {
		t.Errorf("lint = %q", lint)
	}
}

// TestCustomizationErrorKeepsWhatTheClustersRun: after a good render, a
// commit whose GetReplicas fails keeps the previous placement, and each
// cluster keeps the copy it was given (commit safety).
func TestCustomizationErrorKeepsWhatTheClustersRun(t *testing.T) {
	files := sourceFiles(t, "testdata/interpret/source")
	good := renderFiles(t, files, nil)
	files["ric.yaml"] = strings.Replace(files["ric.yaml"], "return obj.spec.replicas or 1,", "while true do end return 1,", 1)
	res := renderFiles(t, files, render.PreviousFromWorks(good.Works))
	if d := cmp.Diff(placement(good), placement(res)); d != "" {
		t.Errorf("placement changed (-before +after):\n%s", d)
	}
	// The instruction budget stops the loop; under the race detector's
	// slowdown the one-second timeout may come first. Either is the
	// script's error, and what the clusters run must stay.
	if len(res.Errors) != 2 || !res.Errors[0].Kept ||
		!strings.Contains(res.Errors[0].Message, "instruction budget exceeded") && !strings.Contains(res.Errors[0].Message, "timeout of 1s exceeded") {
		t.Errorf("errors = %v, want both clusters kept with the budget or timeout error", res.Errors)
	}
	if !res.Bindings[0].KeptPrevious {
		t.Error("the previous placement was not kept")
	}
}

// TestCustomizationDependenciesFollowTheWorkload: with propagateDeps, the
// ConfigMap a Worker names (read by its GetDependencies script) follows it.
func TestCustomizationDependenciesFollowTheWorkload(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": clusters("member1", "member2"),
		"ric.yaml": `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: worker}
spec:
  target: {apiVersion: example.io/v1, kind: Worker}
  customizations:
    dependencyInterpretation:
      luaScript: |
        local kube = require("kube")
        function GetDependencies(obj)
          local deps = kube.getPodDependencies(obj.spec.template, obj.metadata.namespace)
          table.insert(deps, {apiVersion = "v1", kind = "ConfigMap", name = obj.spec.configName})
          return deps
        end
`,
		"worker.yaml": `apiVersion: example.io/v1
kind: Worker
metadata: {name: w, namespace: demo}
spec:
  configName: settings
  template:
    spec:
      containers:
      - name: w
        image: busybox
        envFrom: [{secretRef: {name: creds}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: demo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: demo}
`,
		"policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: w, namespace: demo}
spec:
  propagateDeps: true
  resourceSelectors:
  - {apiVersion: example.io/v1, kind: Worker, name: w}
  placement:
    clusterAffinity: {clusterNames: [member2]}
`,
	}
	res := renderFiles(t, files, nil)
	want := map[string][]string{"member2": {"ConfigMap.core/demo/settings", "Secret.core/demo/creds", "Worker.example.io/demo/w"}}
	if d := cmp.Diff(want, placement(res)); d != "" {
		t.Errorf("placement (-want +got):\n%s", d)
	}
}

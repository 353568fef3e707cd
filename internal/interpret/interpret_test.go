package interpret

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func rollouts(t *testing.T) *Interpreter {
	return New(calmLimits(), []Customization{customization(t, "argo-rollout", "testdata/rollout.lua.yaml", "argoproj.io/v1alpha1", "Rollout")})
}

func TestInterpretReplicaReadsReplicasAndPodRequirements(t *testing.T) {
	in := rollouts(t)
	replicas, req, s, err := in.InterpretReplica(object(rolloutYAML))
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Customization != "argo-rollout" {
		t.Fatalf("script = %v, want the argo-rollout customization", s)
	}
	if replicas != 6 {
		t.Errorf("replicas = %d, want 6", replicas)
	}
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("350m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	if req == nil || !equalResources(req.ResourceRequest, want) {
		t.Errorf("requests = %v, want cpu 350m (a limit stands in for a missing request) and memory 64Mi", req)
	}
	if req == nil || req.NodeClaim == nil || req.NodeClaim.NodeSelector["pool"] != "general" {
		t.Errorf("node claim = %+v, want the nodeSelector pool=general", req)
	}
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if q.Cmp(b[k]) != 0 {
			return false
		}
	}
	return true
}

func TestInterpretReplicaOfOtherKindsIsNotDecided(t *testing.T) {
	_, _, s, err := rollouts(t).InterpretReplica(thing())
	if s != nil || err != nil {
		t.Fatalf("script %v, err %v: a kind without a customization must be left to the built-in interpreter", s, err)
	}
}

func TestReviseReplicaWritesTheShareAndKeepsTheRest(t *testing.T) {
	obj := object(rolloutYAML)
	out, _, err := rollouts(t).ReviseReplica(obj, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := object(rolloutYAML)
	want.Object["spec"].(map[string]any)["replicas"] = int64(4)
	if d := cmp.Diff(want.Object, out.Object); d != "" {
		t.Errorf("revised object (-want +got):\n%s", d)
	}
	if got := obj.Object["spec"].(map[string]any)["replicas"]; got != int64(6) {
		t.Errorf("input changed: replicas = %v", got)
	}
}

func TestRetainKeepsTheMembersPausedField(t *testing.T) {
	desired := object(rolloutYAML)
	observed := object(rolloutYAML)
	observed.Object["spec"].(map[string]any)["paused"] = true
	out, s, err := rollouts(t).Retain(desired, observed)
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	if p, _, _ := unstructured.NestedBool(out.Object, "spec", "paused"); !p {
		t.Errorf("spec.paused = false, want the member's true")
	}
	if steps, found, _ := unstructured.NestedSlice(out.Object, "spec", "strategy", "canary", "steps"); !found || steps == nil {
		t.Errorf("the empty list spec.strategy.canary.steps was lost or became a map: %v", out.Object["spec"])
	}
}

func TestInterpretStatusAndHealthOfAMembersCopy(t *testing.T) {
	in := rollouts(t)
	observed := object(rolloutYAML)
	observed.Object["status"] = map[string]any{"replicas": int64(6), "availableReplicas": int64(6), "phase": "Healthy", "extra": "x"}
	status, _, err := in.InterpretStatus(observed)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"replicas": int64(6), "availableReplicas": int64(6), "phase": "Healthy"}, status); d != "" {
		t.Errorf("reflected status (-want +got):\n%s", d)
	}
	healthy, _, err := in.InterpretHealth(observed)
	if err != nil || !healthy {
		t.Errorf("healthy = %v, %v; want true", healthy, err)
	}
	observed.Object["status"].(map[string]any)["availableReplicas"] = int64(2)
	if healthy, _, err := in.InterpretHealth(observed); err != nil || healthy {
		t.Errorf("healthy = %v, %v with 2/6 available; want false", healthy, err)
	}
}

func TestAggregateStatusSumsTheMembers(t *testing.T) {
	items := []StatusItem{
		{ClusterName: "a", Applied: true, Status: map[string]any{"replicas": int64(4), "availableReplicas": int64(4), "phase": "Healthy"}},
		{ClusterName: "b", Applied: true, Status: map[string]any{"replicas": int64(2), "availableReplicas": int64(1), "phase": "Progressing"}},
		{ClusterName: "c", Applied: false},
	}
	out, _, err := rollouts(t).AggregateStatus(object(rolloutYAML), items)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": int64(6), "availableReplicas": int64(5), "phase": "Progressing"}
	if d := cmp.Diff(want, out.Object["status"]); d != "" {
		t.Errorf("aggregated status (-want +got):\n%s", d)
	}
}

func TestInterpretDependencyListsPodAndSpecReferences(t *testing.T) {
	in := New(calmLimits(), []Customization{customization(t, "worker", "testdata/worker.lua.yaml", "example.io/v1", "Worker")})
	obj := object(`
apiVersion: example.io/v1
kind: Worker
metadata: {name: w, namespace: jobs}
spec:
  configName: worker-settings
  template:
    spec:
      serviceAccountName: runner
      containers:
      - name: w
        image: busybox
        envFrom: [{secretRef: {name: creds}}]
        env: [{name: A, valueFrom: {configMapKeyRef: {name: flags, key: a}}}]
      volumes: [{name: v, configMap: {name: files}}]
`)
	deps, scripts, err := in.InterpretDependency(obj)
	if err != nil || len(scripts) != 1 {
		t.Fatal(scripts, err)
	}
	want := []Dependency{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "jobs", Name: "files"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "jobs", Name: "flags"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "jobs", Name: "creds"},
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "jobs", Name: "runner"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "jobs", Name: "worker-settings"},
	}
	if d := cmp.Diff(want, deps); d != "" {
		t.Errorf("dependencies (-want +got):\n%s", d)
	}
}

func TestFirstCustomizationByNameWinsAndDependenciesJoin(t *testing.T) {
	mk := func(name string, op Operation, src string) Customization {
		s, err := Compile(name, op, src, name+".yaml", 1)
		if err != nil {
			t.Fatal(err)
		}
		return Customization{Name: name, APIVersion: "example.io/v1", Kind: "Thing", Scripts: []*Script{s}}
	}
	in := New(calmLimits(), []Customization{
		mk("b", ReplicaResource, `function GetReplicas(o) return 2 end`),
		mk("a", ReplicaResource, `function GetReplicas(o) return 1 end`),
		mk("c", DependencyInterpretation, `function GetDependencies(o) return {{apiVersion="v1", kind="Secret", namespace="ns", name="s"}} end`),
		mk("d", DependencyInterpretation, `function GetDependencies(o) return {{apiVersion="v1", kind="ConfigMap", namespace="ns", name="c"}} end`),
	})
	n, _, s, err := in.InterpretReplica(thing())
	if err != nil || n != 1 || s.Customization != "a" {
		t.Errorf("replicas %d from %v (%v), want 1 from a, the first by name", n, s, err)
	}
	deps, _, err := in.InterpretDependency(thing())
	if err != nil || len(deps) != 2 {
		t.Errorf("dependencies %v (%v), want both scripts' results", deps, err)
	}
}

func TestScriptErrorsNameTheCustomizationFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"runtime error on line 3", "function GetReplicas(obj)\n  local x = nil\n  return x.y\nend", `ResourceInterpreterCustomization.config.karmada.io/thing replicaResource (ric.yaml:12): attempt to index a non-table object(nil) with key 'y'`},
		{"error() call", "function GetReplicas(obj)\n  error('no replicas here')\nend", `(ric.yaml:11): no replicas here`},
		{"function missing", "function Other(obj) return 1 end", `(ric.yaml:10): the script does not define function GetReplicas`},
		{"wrong result", "function GetReplicas(obj) return 'three' end", `GetReplicas returned replicas three, want a whole number`},
		{"negative", "function GetReplicas(obj) return -1 end", `want a whole number from 0`},
		{"bad requirements", "function GetReplicas(obj) return 1, 'x' end", `GetReplicas returned a string, want a table`},
		{"os is absent", "function GetReplicas(obj) return os.time() end", `attempt to index a non-table object(nil)`},
		{"dofile is refused", "function GetReplicas(obj) dofile('/etc/passwd') end", `dofile is not supported`},
		{"only kube can be required", "local io = require('io')\nfunction GetReplicas(obj) return 1 end", `(ric.yaml:10): module "io" not found`},
		{"setmetatable is refused", "function GetReplicas(obj) setmetatable({}, {}) end", `setmetatable is not supported`},
		{"recursion", "local function f(n) return 1 + f(n) end\nfunction GetReplicas(obj) return f(1) end", `stack overflow`},
		{"huge string.rep", "function GetReplicas(obj) local s = string.rep('x', 1e9) return 1 end", `string.rep: result longer than`},
		{"cycle in result", "function GetReplicas(obj) local t = {} t.self = t return 1, t end", `nested deeper than 100`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := single(t, ReplicaResource, tc.src).InterpretReplica(thing())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCompileErrorNamesTheFileLine(t *testing.T) {
	_, err := Compile("thing", ReplicaResource, "function GetReplicas(obj)\n  return obj.spec.replicas +\nend", "ric.yaml", 20)
	if err == nil || !strings.Contains(err.Error(), `ResourceInterpreterCustomization.config.karmada.io/thing replicaResource (ric.yaml:22): syntax error`) {
		t.Fatalf("error = %v, want a syntax error at ric.yaml:22", err)
	}
}

func TestRunawayScriptsAreStopped(t *testing.T) {
	for _, tc := range []struct {
		name, src string
	}{
		{"loops forever", "function GetReplicas(obj)\n  while true do end\nend"},
		{"loops forever inside pcall", "function GetReplicas(obj)\n  while true do pcall(function() while true do end end) end\nend"},
		{"grows a table without bound", "function GetReplicas(obj)\n  local t = {}\n  local i = 0\n  while true do i = i + 1; t[i] = {i, tostring(i)} end\nend"},
		{"doubles a string without bound", "function GetReplicas(obj)\n  local s = string.rep('x', 1000)\n  while true do s = s .. s end\nend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, _, err := singleWith(t, DefaultLimits(), ReplicaResource, tc.src).InterpretReplica(thing())
			took := time.Since(start)
			e, ok := err.(*Error)
			if !ok || !e.Budget {
				t.Fatalf("error = %v, want a budget *Error", err)
			}
			if !strings.Contains(e.Error(), `ResourceInterpreterCustomization.config.karmada.io/thing replicaResource (ric.yaml:10): stopped:`) {
				t.Errorf("error = %q, want it to name the customization and where it is", e)
			}
			// The hard timeout (2 s) bounds the call whatever the script
			// does; the slack is for a CI machine busy with apiservers,
			// where the doubling string has taken 3.7 s to be abandoned
			// (1.2 s on a quiet machine). A script never stopped would
			// hang here until the test's own timeout.
			if limit := DefaultLimits().HardTimeout + 4*time.Second; took > limit {
				t.Errorf("took %s to stop, want at most %s", took, limit)
			}
			t.Logf("%s after %s", e.Message, took.Round(time.Millisecond))
		})
	}
}

func TestConversionKeepsIntegersAndEmptyValues(t *testing.T) {
	in := single(t, ReplicaRevision, "function ReviseReplica(obj, n)\n  obj.spec.half = n / 2\n  obj.spec.added = {}\n  return obj\nend")
	obj := thing()
	obj.Object["spec"].(map[string]any)["empty"] = map[string]any{}
	obj.Object["spec"].(map[string]any)["none"] = []any{}
	out, _, err := in.ReviseReplica(obj, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": int64(3), "half": 1.5, "empty": map[string]any{}, "none": []any{}}
	if d := cmp.Diff(want, out.Object["spec"]); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
}

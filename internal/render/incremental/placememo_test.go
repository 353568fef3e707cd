package incremental_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
	"github.com/propagit/propagit/internal/restrict"
)

// memoWorld is everything a controller pass hands Render.
type memoWorld struct {
	files     map[string]string
	status    map[string]*clusterv1alpha1.ClusterStatus
	prev      *render.Previous
	now       time.Time
	unhealthy render.Unhealthy
}

func (w *memoWorld) input(set *load.Set) render.Input {
	return render.Input{Set: set, Status: w.status, Previous: w.prev, Now: w.now, Unhealthy: w.unhealthy,
		Options: render.DefaultOptions()}
}

// memoCluster declares a Ready cluster of the given tier with room for
// cpu/500m replicas of web.
func memoCluster(name, tier, cpu string) string {
	return fmt.Sprintf(`---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: %s, labels: {tier: %s}}
spec: {syncMode: Push}
status:
  conditions:
  - {type: Ready, status: "True", reason: Probe, message: probe, lastTransitionTime: "%s"}
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
  resourceSummary:
    allocatable: {cpu: "%s", pods: "100"}
`, name, tier, t0.Add(-time.Hour).Format(time.RFC3339), cpu)
}

const memoWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        resources: {requests: {cpu: 500m}}
`

const memoPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  propagateDeps: true
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: gold}}}
    clusterTolerations:
    - {key: cluster.karmada.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
  failover:
    cluster: {purgeMode: Directly}
    application:
      decisionConditions: {tolerationSeconds: 60}
      purgeMode: Directly
`

// memoCustomization asks for 3 replicas of web, whatever its spec says.
const memoCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: fixed-replicas}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          return 3, kube.accuratePodRequirements(obj.spec.template)
        end
`

func memoBaseWorld() *memoWorld {
	return &memoWorld{now: t0, files: map[string]string{
		"clusters.yaml": memoCluster("m1", "gold", "4") + memoCluster("m2", "gold", "2") + memoCluster("m3", "gold", "1"),
		"web.yaml":      memoWeb,
		"policy.yaml":   memoPolicy,
	}}
}

// liveStatus is cluster name's status from Git, changed by edit, as the
// controller's probes would report it.
func liveStatus(t *testing.T, w *memoWorld, name string, edit func(*clusterv1alpha1.ClusterStatus)) {
	t.Helper()
	set := loadFiles(t, w.files, nil)
	for _, c := range set.Clusters {
		if c.Cluster.Name == name {
			s := c.Cluster.Status.DeepCopy()
			edit(s)
			if w.status == nil {
				w.status = map[string]*clusterv1alpha1.ClusterStatus{}
			}
			w.status[name] = s
			return
		}
	}
	t.Fatalf("no cluster %s", name)
}

func setReady(status string, since time.Time) func(*clusterv1alpha1.ClusterStatus) {
	return func(s *clusterv1alpha1.ClusterStatus) {
		s.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionStatus(status), Reason: "Probe",
			Message: "probe", LastTransitionTime: metav1.NewTime(since)}}
	}
}

// withPrevious records, as the controller does, what w renders to as the
// history of the next render.
func withPrevious(t *testing.T, w *memoWorld) {
	t.Helper()
	w.prev = render.PreviousFromWorks(render.Render(w.input(loadFiles(t, w.files, nil))).Works)
}

var webKey = workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}

// TestMemoNeverServesAStaleSchedule changes, one at a time, each input that
// matching and scheduling read, after the memo has remembered the
// placement, and checks that the memo's render equals a render without
// it. Each change moves the template, so a memo that forgot an input in its
// key would serve the old placement and fail.
func TestMemoNeverServesAStaleSchedule(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares the world before the memo learns it; clockBound
		// says the placement it gives depends on the clock (never
		// remembered).
		setup      func(*testing.T, *memoWorld)
		clockBound bool
		change     func(*testing.T, *memoWorld)
	}{
		{name: "a cluster label", change: func(t *testing.T, w *memoWorld) {
			w.files["clusters.yaml"] = strings.Replace(w.files["clusters.yaml"], "{name: m3, labels: {tier: gold}}", "{name: m3, labels: {tier: silver}}", 1)
		}},
		{name: "a taint in Git", change: func(t *testing.T, w *memoWorld) {
			w.files["clusters.yaml"] = strings.Replace(w.files["clusters.yaml"], "{name: m2, labels: {tier: gold}}\nspec: {syncMode: Push}",
				"{name: m2, labels: {tier: gold}}\nspec: {syncMode: Push, taints: [{key: dedicated, value: db, effect: NoSchedule}]}", 1)
		}},
		{name: "a ClusterTaintPolicy", change: func(t *testing.T, w *memoWorld) {
			w.files["taint.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: drain-m1}
spec:
  targetClusters: {clusterNames: [m1]}
  addOnConditions:
  - {conditionType: Ready, operator: In, statusValues: ["True"]}
  taints:
  - {key: draining, effect: NoSchedule}
`
		}},
		{name: "a cluster turning NotReady (live status)", change: func(t *testing.T, w *memoWorld) {
			liveStatus(t, w, "m1", setReady("False", t0))
		}},
		{name: "capacity (live status)", change: func(t *testing.T, w *memoWorld) {
			liveStatus(t, w, "m1", func(s *clusterv1alpha1.ClusterStatus) {
				s.ResourceSummary.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")}
			})
		}},
		{name: "an API disabled (live status)", change: func(t *testing.T, w *memoWorld) {
			liveStatus(t, w, "m2", func(s *clusterv1alpha1.ClusterStatus) { s.APIEnablements = nil })
		}},
		{name: "the winning policy", change: func(t *testing.T, w *memoWorld) {
			w.files["policy.yaml"] = strings.Replace(w.files["policy.yaml"], "replicaDivisionPreference: Weighted", "replicaDivisionPreference: Aggregated", 1)
		}},
		{name: "a policy that wins instead", change: func(t *testing.T, w *memoWorld) {
			w.files["other.yaml"] = strings.NewReplacer("name: web, namespace", "name: other, namespace", "spec:\n", "spec:\n  priority: 10\n",
				"labelSelector: {matchLabels: {tier: gold}}", "clusterNames: [m3]").Replace(memoPolicy)
		}},
		{name: "the template's replicas", change: func(t *testing.T, w *memoWorld) {
			w.files["web.yaml"] = strings.Replace(w.files["web.yaml"], "replicas: 6", "replicas: 9", 1)
		}},
		{name: "the template's requests", change: func(t *testing.T, w *memoWorld) {
			w.files["web.yaml"] = strings.Replace(w.files["web.yaml"], "cpu: 500m", "cpu: 1500m", 1)
		}},
		{name: "the interpreter's answer (a customization's GetReplicas)", change: func(t *testing.T, w *memoWorld) {
			w.files["ric.yaml"] = memoCustomization
		}},
		{name: "the previous placement", setup: withPrevious, change: func(t *testing.T, w *memoWorld) {
			more := *w
			more.files = map[string]string{}
			for k, v := range w.files {
				more.files[k] = strings.Replace(v, "replicas: 6", "replicas: 12", 1)
			}
			withPrevious(t, &more)
			w.prev = more.prev // scaling down divides by the previous replicas
		}},
		{name: "an eviction: unhealthy for longer than tolerated", setup: withPrevious, change: func(t *testing.T, w *memoWorld) {
			w.unhealthy = render.Unhealthy{"m1": {webKey: t0.Add(-2 * time.Minute)}}
		}},
		{name: "an eviction: NotReady for longer than tolerated", clockBound: true, setup: func(t *testing.T, w *memoWorld) {
			withPrevious(t, w)
			liveStatus(t, w, "m1", setReady("False", t0))
			w.now = t0.Add(10 * time.Second)
		}, change: func(t *testing.T, w *memoWorld) {
			w.now = t0.Add(301 * time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := memoBaseWorld()
			if tc.setup != nil {
				tc.setup(t, w)
			}
			memo, cache := incremental.NewMemo(), load.NewCache()
			memoRender := func() *render.Result { return memo.Render(w.input(loadFiles(t, w.files, cache))) }
			memoRender()
			if again := memoRender(); !tc.clockBound && memo.Scheduled != 0 {
				t.Fatalf("nothing changed, yet %d templates were scheduled again", memo.Scheduled)
			} else if a, b := placementJSON(t, again), placementJSON(t, render.Render(w.input(loadFiles(t, w.files, nil)))); a != b {
				t.Fatalf("before the change, the memo changed the output:\nwithout: %s\nwith:    %s", b, a)
			}
			before := placementJSON(t, render.Render(w.input(loadFiles(t, w.files, nil))))
			tc.change(t, w)
			fresh := placementJSON(t, render.Render(w.input(loadFiles(t, w.files, nil))))
			if fresh == before {
				t.Fatalf("the change does not move the template; the case proves nothing:\n%s", fresh)
			}
			if got := placementJSON(t, memoRender()); got != fresh {
				t.Errorf("the memo served a stale placement:\nwithout: %s\nwith:    %s", fresh, got)
			}
		})
	}
}

// placementJSON is what matching and scheduling decided, and the Works.
func placementJSON(t *testing.T, res *render.Result) string {
	t.Helper()
	type target struct {
		Cluster              string
		Replicas             int32
		Scheduled, Suspended bool
		Kept                 bool
		Error                string
	}
	type binding struct {
		Key                         string
		Policy                      *render.PolicyRef
		Winner, Reason              string
		Candidates                  []string
		Decision                    any
		ScheduleError, AffinityName string
		KeptPrevious                bool
		Targets                     []target
		Evictions                   []render.Eviction
	}
	out := struct {
		Bindings []binding
		Works    []render.Work
	}{Works: res.Works}
	for _, b := range res.Bindings {
		o := binding{Key: b.Key.String(), Policy: b.Policy, Reason: b.Choice.Reason, Decision: b.Decision, ScheduleError: b.ScheduleError,
			AffinityName: b.AffinityName, KeptPrevious: b.KeptPrevious, Evictions: b.Evictions}
		if b.Choice.Winner != nil {
			o.Winner = b.Choice.Winner.Key()
		}
		for _, c := range b.Choice.Candidates {
			o.Candidates = append(o.Candidates, fmt.Sprintf("%s %d %d %s", c.Key(), c.Explicit, c.Implicit, c.Policy.Source))
		}
		for _, tg := range b.Targets {
			o.Targets = append(o.Targets, target{tg.Cluster, tg.Replicas, tg.Scheduled, tg.Suspended, tg.Kept, tg.Error})
		}
		out.Bindings = append(out.Bindings, o)
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMemoReusesRestrictionVerdictsOnlyWhileValid renders one repository
// through a memo under restriction policies and template folders that
// change the verdict, and checks each render against one without the memo.
func TestMemoReusesRestrictionVerdictsOnlyWhileValid(t *testing.T) {
	files := memoBaseWorld().files
	permissive := &restrict.Policy{}
	onlyOther := &restrict.Policy{Namespaces: []string{"other"}}
	teamFolder := &restrict.Policy{Folders: []restrict.Folder{{Path: "team", Namespaces: []string{"other"}}}}
	memo, cache := incremental.NewMemo(), load.NewCache()
	for _, step := range []struct {
		name   string
		policy *restrict.Policy
		change func()
		errors int
	}{
		{"allowed", permissive, func() {}, 0},
		{"the namespace no longer allowed", onlyOther, func() {}, 3},
		{"allowed again", permissive, func() {}, 0},
		{"a folder rule, template outside the folder", teamFolder, func() {}, 0},
		{"the same document moved into the folder", teamFolder, func() {
			files["team/web.yaml"] = files["web.yaml"]
			delete(files, "web.yaml")
		}, 3},
	} {
		step.change()
		opts := render.DefaultOptions()
		opts.Restrictions = step.policy
		for pass := range 2 { // the second finds the templates placed and settled as the first left them
			fresh := render.Render(render.Input{Set: loadFiles(t, files, nil), Options: opts})
			got := memo.Render(render.Input{Set: loadFiles(t, files, cache), Options: opts})
			if len(fresh.Errors) != step.errors {
				t.Fatalf("%s: %d errors without the memo, want %d", step.name, len(fresh.Errors), step.errors)
			}
			if a, b := placementJSON(t, fresh), placementJSON(t, got); a != b {
				t.Errorf("%s (render %d): the memo changed the output:\nwithout: %s\nwith:    %s", step.name, pass+1, a, b)
			}
		}
	}
}

// TestMemoSharedTargetsFollowEveryStage renders, controller-like (each
// render's Works are the next one's history, through a incremental.History for
// the memo's renders), a sequence of revisions that make later stages
// change templates the memo had settled: a dependency attached to one,
// restriction refusals, namespace auto-propagation, a policy removed,
// preserved labels coming and going, an override changing what a settled
// template renders to. Each revision is rendered twice, so that the next
// finds its templates placed and settled as they were. Each render through
// the memo must equal the render without it.
func TestMemoSharedTargetsFollowEveryStage(t *testing.T) {
	env := `apiVersion: v1
kind: ConfigMap
metadata: {name: web-env, namespace: demo}
data: {A: "1"}
`
	envPolicy := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: env, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: web-env}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`
	w := memoBaseWorld()
	w.files["env.yaml"], w.files["env-policy.yaml"] = env, envPolicy
	w.files["ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n"
	w.files["ns-policy.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: namespaces}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: demo}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`
	w.files["policy.yaml"] = strings.Replace(w.files["policy.yaml"], "  propagateDeps: true\n", "", 1)
	w.files["policy.yaml"] = w.files["policy.yaml"][:strings.Index(w.files["policy.yaml"], "  failover:")]
	opts := render.DefaultOptions()
	memo, cache := incremental.NewMemo(), load.NewCache()
	withEnv := func() {
		w.files["web.yaml"] = strings.Replace(memoWeb, "        resources:", "        envFrom: [{configMapRef: {name: web-env}}]\n        resources:", 1)
		w.files["policy.yaml"] = strings.Replace(w.files["policy.yaml"], "spec:\n", "spec:\n  propagateDeps: true\n", 1)
	}
	override := func(label string) string {
		return `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: label, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [m1]}
    overriders: {labelsOverrider: [{operator: add, value: {` + label + `: "yes"}}]}
`
	}
	var last, lastGot, plain, plainGot *render.Result
	var hist incremental.History
	var memoPrev *render.Previous
	keepHistory := true
	preserved := func() {
		w.prev, memoPrev = render.PreviousFromWorks(withPreservedLabel(last.Works)), hist.Next(withPreservedLabel(lastGot.Works))
		keepHistory = false
	}
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"first render", func() {}},
		{"web now depends on the settled web-env", withEnv},
		{"the dependency dropped", func() {
			w.files["web.yaml"], w.files["policy.yaml"] = memoWeb, strings.Replace(w.files["policy.yaml"], "  propagateDeps: true\n", "", 1)
		}},
		{"the namespace refused", func() { opts.Restrictions = &restrict.Policy{Namespaces: []string{"other"}} }},
		{"the namespace allowed again", func() { opts.Restrictions = nil }},
		{"no namespace auto-propagation", func() { opts.NamespaceAutoPropagation = false }},
		{"namespace auto-propagation back", func() { opts.NamespaceAutoPropagation = true }},
		{"an override on m1", func() { w.files["override.yaml"] = override("one") }},
		{"the override changed", func() { w.files["override.yaml"] = override("two") }},
		{"the override removed", func() { delete(w.files, "override.yaml"); plain, plainGot = last, lastGot }},
		{"a preserved label recorded on m1", preserved},
		{"the preserved label gone from the history", func() {
			w.prev, memoPrev = render.PreviousFromWorks(plain.Works), hist.Next(plainGot.Works)
			keepHistory = true
		}},
		{"web-env's policy removed", func() { delete(w.files, "env-policy.yaml") }},
		{"web-env claimed again", func() { w.files["env-policy.yaml"] = envPolicy }},
	} {
		step.change()
		for pass := range 2 {
			in := w.input(loadFiles(t, w.files, nil))
			in.Options = opts
			fresh := render.Render(in)
			in = w.input(loadFiles(t, w.files, cache))
			in.Options, in.Previous = opts, memoPrev
			got := memo.Render(in)
			if a, b := placementJSON(t, fresh), placementJSON(t, got); a != b {
				t.Fatalf("%s (render %d): the memo changed the output:\nwithout: %s\nwith:    %s", step.name, pass+1, a, b)
			}
			last, lastGot = fresh, got
			if keepHistory {
				w.prev, memoPrev = render.PreviousFromWorks(fresh.Works), hist.Next(got.Works)
			}
		}
	}
}

// TestMemoCapacityReschedulesOnlyWorkloads: only the estimator reads a
// cluster's capacity, and only for workloads, so a capacity change
// schedules the Deployment again but not the ConfigMap beside it.
func TestMemoCapacityReschedulesOnlyWorkloads(t *testing.T) {
	w := memoBaseWorld()
	w.files["env.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-env, namespace: demo}\ndata: {A: \"1\"}\n"
	w.files["env-policy.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: env, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: web-env}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {tier: gold}}}}
`
	memo, cache := incremental.NewMemo(), load.NewCache()
	for _, step := range []struct {
		name          string
		change        func()
		wantScheduled int
	}{
		{"first render", func() {}, 2},
		{"nothing changed", func() {}, 0},
		{"m1's capacity changed", func() {
			liveStatus(t, w, "m1", func(s *clusterv1alpha1.ClusterStatus) {
				s.ResourceSummary.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")}
			})
		}, 1},
		{"m1 turned NotReady", func() { liveStatus(t, w, "m1", setReady("False", t0)) }, 2},
	} {
		step.change()
		fresh := render.Render(w.input(loadFiles(t, w.files, nil)))
		got := memo.Render(w.input(loadFiles(t, w.files, cache)))
		if a, b := placementJSON(t, fresh), placementJSON(t, got); a != b {
			t.Fatalf("%s: the memo changed the output:\nwithout: %s\nwith:    %s", step.name, a, b)
		}
		if memo.Scheduled != step.wantScheduled {
			t.Errorf("%s: %d templates scheduled, want %d", step.name, memo.Scheduled, step.wantScheduled)
		}
	}
}

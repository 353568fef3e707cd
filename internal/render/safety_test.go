package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// safetyFleet reads testdata/safety: clusters m1 and m2, Deployment
// demo/web (image registry.example.com/web:1.0) with its ConfigMap
// demo/web-env, and PropagationPolicy.policy.karmada.io/demo/web sending both to m1 and m2.
func safetyFleet(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir("testdata/safety")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata/safety", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// overridePolicy is an OverridePolicy on demo/web for cluster m2.
func overridePolicy(overriders string) string {
	return `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: typo, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  overrideRules:
  - targetCluster: {clusterNames: [m2]}
    overriders:
` + overriders
}

const (
	web    = "Deployment.apps/demo/web"
	webEnv = "ConfigMap.core/demo/web-env"
	demoNS = "Namespace.core/demo"
)

// summary lists, per cluster, each object's key, with the image for
// Deployments: enough to tell a kept copy from a new rendering.
func summary(res *render.Result) map[string][]string {
	out := map[string][]string{}
	for _, w := range res.Works {
		for _, o := range w.Objects {
			s := workv1alpha1.KeyOf(o).String()
			if cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers"); len(cs) > 0 {
				img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
				s += " " + img
			}
			out[w.Cluster] = append(out[w.Cluster], s)
		}
	}
	return out
}

func boolWord(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func orphanSummary(res *render.Result) []string {
	var out []string
	for _, o := range res.Orphans {
		out = append(out, o.Cluster+" "+workv1alpha1.KeyOf(o.Object).String()+" "+o.Reason)
	}
	return out
}

func unclaimedSummary(res *render.Result) []string {
	var out []string
	for _, u := range res.Unclaimed {
		out = append(out, u.Template.String()+" "+strings.Join(u.Clusters, ",")+" "+u.Policy)
	}
	return out
}

const (
	img1 = " registry.example.com/web:1.0"
	img2 = " registry.example.com/web:2.0"
)

// TestCommitSafety renders the fixture fleet (base), then a changed fleet
// (head) with the base's Works as its history, and checks what each
// cluster receives at head.
func TestCommitSafety(t *testing.T) {
	newImage := func(f map[string]string) {
		f["app.yaml"] = strings.Replace(f["app.yaml"], "web:1.0", "web:2.0", 1)
	}
	cases := []struct {
		name       string
		base, head func(map[string]string)
		noHistory  bool
		want       map[string][]string
		errors     []string
		unclaimed  []string
		orphans    []string
		errMessage string
	}{{
		name: "an override path that does not exist keeps the failing cluster's object, other clusters go ahead",
		head: func(f map[string]string) {
			newImage(f)
			f["typo.yaml"] = overridePolicy("      plaintext:\n      - {path: /spec/strategy/rollingUpdate/maxSurge, operator: replace, value: 2}\n")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img2},
			"m2": {demoNS, webEnv, web + img1},
		},
		errors:     []string{web + " m2 OverridePolicy.policy.karmada.io/demo/typo overrideRules[0].overriders.plaintext /spec/strategy/rollingUpdate/maxSurge kept"},
		errMessage: "/spec/strategy/rollingUpdate/maxSurge",
	}, {
		name: "a field overrider on a number keeps the failing cluster's object",
		head: func(f map[string]string) {
			newImage(f)
			f["typo.yaml"] = overridePolicy("      fieldOverrider:\n      - fieldPath: /spec/replicas\n        yaml:\n        - {subPath: /a, operator: replace, value: b}\n")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img2},
			"m2": {demoNS, webEnv, web + img1},
		},
		errors: []string{web + " m2 OverridePolicy.policy.karmada.io/demo/typo overrideRules[0].overriders.fieldOverrider[0] /spec/replicas kept"},
	}, {
		name: "an image that does not parse keeps the failing cluster's object",
		head: func(f map[string]string) {
			f["app.yaml"] = strings.Replace(f["app.yaml"], "registry.example.com/web:1.0", "Registry.Example.com/Web::2.0", 1)
			f["typo.yaml"] = overridePolicy("      imageOverrider:\n      - {component: Tag, operator: replace, value: \"3.0\"}\n")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + " Registry.Example.com/Web::2.0"},
			"m2": {demoNS, webEnv, web + img1},
		},
		errors: []string{web + " m2 OverridePolicy.policy.karmada.io/demo/typo overrideRules[0].overriders.imageOverrider[0]  kept"},
	}, {
		name: "an override that makes the object invalid keeps the failing cluster's object",
		head: func(f map[string]string) {
			newImage(f)
			f["typo.yaml"] = overridePolicy("      plaintext:\n      - {path: /metadata/labels/tier, operator: add, value: \"front end!\"}\n")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img2},
			"m2": {demoNS, webEnv, web + img1},
		},
		errors:     []string{web + " m2   metadata.labels kept"},
		errMessage: "front end!",
	}, {
		name:      "a failure without history is reported and the pair is absent",
		noHistory: true,
		head: func(f map[string]string) {
			f["typo.yaml"] = overridePolicy("      plaintext:\n      - {path: /spec/nope, operator: replace, value: 2}\n")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img1},
			"m2": {demoNS, webEnv},
		},
		errors: []string{web + " m2 OverridePolicy.policy.karmada.io/demo/typo overrideRules[0].overriders.plaintext /spec/nope absent"},
	}, {
		name: "a deleted policy leaves its templates unclaimed where they ran, dependencies included",
		head: func(f map[string]string) {
			newImage(f)
			delete(f, "policy.yaml")
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img1},
			"m2": {demoNS, webEnv, web + img1},
		},
		unclaimed: []string{webEnv + " m1,m2 ", web + " m1,m2 PropagationPolicy.policy.karmada.io/demo/web"},
	}, {
		name: "a selector typo leaves the template unclaimed",
		head: func(f map[string]string) {
			f["policy.yaml"] = strings.Replace(f["policy.yaml"], "apiVersion: apps/v1, kind: Deployment", "apiVersion: app/v1, kind: Deployment", 1)
		},
		want: map[string][]string{
			"m1": {demoNS, webEnv, web + img1},
			"m2": {demoNS, webEnv, web + img1},
		},
		unclaimed: []string{webEnv + " m1,m2 ", web + " m1,m2 PropagationPolicy.policy.karmada.io/demo/web"},
	}, {
		name: "removing the template from Git deletes its objects",
		head: func(f map[string]string) {
			f["app.yaml"] = strings.Split(f["app.yaml"], "---")[0]
		},
		want: map[string][]string{"m1": {demoNS}, "m2": {demoNS}},
	}, {
		name: "a removed template whose policy preserves resources on deletion is orphaned, not deleted",
		base: func(f map[string]string) {
			f["policy.yaml"] = strings.Replace(f["policy.yaml"], "  propagateDeps: true\n", "  propagateDeps: true\n  preserveResourcesOnDeletion: true\n", 1)
		},
		head: func(f map[string]string) {
			f["app.yaml"] = strings.Split(f["app.yaml"], "---")[0]
		},
		want:    map[string][]string{"m1": {demoNS}, "m2": {demoNS}},
		orphans: []string{"m1 " + web + " preserveResourcesOnDeletion", "m2 " + web + " preserveResourcesOnDeletion"},
	}, {
		name: "a removed template annotated propagit.io/prune: disabled is orphaned, not deleted",
		base: func(f map[string]string) {
			f["app.yaml"] = strings.Replace(f["app.yaml"], "  labels: {app: web}\n", "  labels: {app: web}\n  annotations: {propagit.io/prune: disabled}\n", 1)
		},
		head: func(f map[string]string) {
			f["app.yaml"] = strings.Split(f["app.yaml"], "---")[0]
		},
		want:    map[string][]string{"m1": {demoNS}, "m2": {demoNS}},
		orphans: []string{"m1 " + web + " prune disabled", "m2 " + web + " prune disabled"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := safetyFleet(t)
			if tc.base != nil {
				tc.base(base)
			}
			head := map[string]string{}
			for k, v := range base {
				head[k] = v
			}
			tc.head(head)
			var prev *render.Previous
			if !tc.noHistory {
				prev = render.PreviousFromWorks(renderFiles(t, base, nil).Works)
			}
			res := renderFiles(t, head, prev)
			if d := cmp.Diff(tc.want, summary(res)); d != "" {
				t.Errorf("works (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.errors, errorSummary(res)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.unclaimed, unclaimedSummary(res)); d != "" {
				t.Errorf("unclaimed (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.orphans, orphanSummary(res)); d != "" {
				t.Errorf("orphans (-want +got):\n%s", d)
			}
			if tc.errMessage != "" && (len(res.Errors) == 0 || !strings.Contains(res.Errors[0].String(), tc.errMessage)) {
				t.Errorf("errors %v: want one naming %q", res.Errors, tc.errMessage)
			}
		})
	}
}

// TestUnclaimedTemplateIsClaimedAgain deletes the policy, then adds one
// that selects the template for m1 only: the new policy claims it and
// decides its placement again (Karmada re-matches a released template).
func TestUnclaimedTemplateIsClaimedAgain(t *testing.T) {
	base := safetyFleet(t)
	unclaimedFleet := map[string]string{}
	for k, v := range base {
		if k != "policy.yaml" {
			unclaimedFleet[k] = v
		}
	}
	prev := render.PreviousFromWorks(renderFiles(t, base, nil).Works)
	unclaimed := renderFiles(t, unclaimedFleet, prev)
	if len(unclaimed.Unclaimed) == 0 {
		t.Fatal("deleting the policy left nothing unclaimed")
	}
	e := render.Explain(binding(t, unclaimed, web), unclaimed.Clusters)
	if e.Unclaimed != render.UnclaimedMessage || len(e.Targets) != 2 || e.Targets[0].Kept != render.KeptUnclaimed {
		t.Errorf("explain of the unclaimed template: %+v", e)
	}
	// Unclaimed again from its own carried copies: nothing moves.
	again := renderFiles(t, unclaimedFleet, render.PreviousFromWorks(unclaimed.Works))
	if d := cmp.Diff(summary(unclaimed), summary(again)); d != "" {
		t.Errorf("an unclaimed template rendered twice moves (-first +second):\n%s", d)
	}
	claimed := map[string]string{}
	for k, v := range unclaimedFleet {
		claimed[k] = v
	}
	claimed["policy2.yaml"] = strings.NewReplacer("name: web, namespace", "name: web2, namespace", "[m1, m2]", "[m1]").Replace(base["policy.yaml"])
	res := renderFiles(t, claimed, render.PreviousFromWorks(again.Works))
	want := map[string][]string{"m1": {demoNS, webEnv, web + img1}, "m2": {demoNS}}
	if d := cmp.Diff(want, summary(res)); d != "" {
		t.Errorf("works once claimed again (-want +got):\n%s", d)
	}
	if len(res.Unclaimed) != 0 {
		t.Errorf("claimed again, still unclaimed: %v", unclaimedSummary(res))
	}
	if got := object(t, res, "m1", web).GetAnnotations()[workv1alpha1.AnnotationPPName]; got != "web2" {
		t.Errorf("claimed by %q, want web2", got)
	}
}

// TestPreserveResourcesOnDeletionIsStamped checks that the policy's choice
// is recorded on every object it propagates, dependencies excepted, so that
// it is known once the policy is gone.
func TestPreserveResourcesOnDeletionIsStamped(t *testing.T) {
	files := safetyFleet(t)
	res := renderFiles(t, files, nil)
	if _, set := object(t, res, "m1", web).GetAnnotations()[workv1alpha1.AnnotationPreserveResourcesOnDeletion]; set {
		t.Error("stamped without preserveResourcesOnDeletion")
	}
	files["policy.yaml"] = strings.Replace(files["policy.yaml"], "  propagateDeps: true\n", "  propagateDeps: true\n  preserveResourcesOnDeletion: true\n", 1)
	res = renderFiles(t, files, nil)
	for _, c := range []string{"m1", "m2"} {
		if got := object(t, res, c, web).GetAnnotations()[workv1alpha1.AnnotationPreserveResourcesOnDeletion]; got != "true" {
			t.Errorf("%s: %s=%q, want true", c, workv1alpha1.AnnotationPreserveResourcesOnDeletion, got)
		}
	}
}

// TestFailedPairKeptThroughMemo renders a failing override twice through
// one Memo: the reused rendering keeps the recorded object and reports
// the failure again, and the fix renders normally.
func TestFailedPairKeptThroughMemo(t *testing.T) {
	base := safetyFleet(t)
	prev := render.PreviousFromWorks(renderFiles(t, base, nil).Works)
	head := map[string]string{}
	for k, v := range base {
		head[k] = v
	}
	head["app.yaml"] = strings.Replace(head["app.yaml"], "web:1.0", "web:2.0", 1)
	head["typo.yaml"] = overridePolicy("      plaintext:\n      - {path: /spec/nope, operator: replace, value: 2}\n")
	memo := incremental.NewMemo()
	set := loadFiles(t, head, nil)
	var first *render.Result
	for i := range 2 {
		res := memo.Render(render.Input{Set: set, Options: render.DefaultOptions(), Previous: prev})
		if len(res.Errors) != 1 || !res.Errors[0].Kept {
			t.Fatalf("render %d: errors %v, want one kept", i, errorSummary(res))
		}
		if first == nil {
			first = res
			continue
		}
		if memo.Reused == 0 {
			t.Error("the second render reused nothing; the test proves nothing")
		}
		if d := cmp.Diff(summary(first), summary(res)); d != "" {
			t.Errorf("memo render differs (-first +second):\n%s", d)
		}
	}
	delete(head, "typo.yaml")
	res := memo.Render(render.Input{Set: loadFiles(t, head, nil), Options: render.DefaultOptions(), Previous: prev})
	if len(res.Errors) != 0 || object(t, res, "m2", web).GetAnnotations() == nil {
		t.Errorf("fixed: errors %v", errorSummary(res))
	}
	if d := cmp.Diff([]string{demoNS, webEnv, web + img2}, summary(res)["m2"]); d != "" {
		t.Errorf("fixed: m2 (-want +got):\n%s", d)
	}
}

package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
	"github.com/propagit/propagit/internal/render/rendertest"
)

// readyCluster declares a cluster whose Ready condition is status since at.
func readyCluster(name, status string, at time.Time) string {
	return fmt.Sprintf(`---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: %s}
spec: {syncMode: Push}
status:
  conditions:
  - {type: Ready, status: "%s", reason: Probe, message: probe, lastTransitionTime: "%s"}
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
`, name, status, at.Format(time.RFC3339))
}

func failoverPolicy(purge string) string {
	return pp("nginx", fmt.Sprintf(`  propagateDeps: true
  failover:
    application:
      decisionConditions: {tolerationSeconds: 10}
      purgeMode: %s
%s  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [m1]
    - affinityName: backup
      clusterNames: [m2]
`, purge, map[bool]string{true: "      gracePeriodSeconds: 60\n", false: ""}[purge == "Gracefully" || purge == "Graciously"]))
}

func renderAt(t *testing.T, now time.Time, prev *render.Previous, files map[string]string) *render.Result {
	t.Helper()
	return renderWith(t, render.Input{Previous: prev, Now: now}, files)
}

// renderWith renders files with in's history, clock and health.
func renderWith(t *testing.T, in render.Input, files map[string]string) *render.Result {
	t.Helper()
	return renderThrough(t, nil, in, files)
}

// renderThrough is renderWith through memo (afresh when nil).
func renderThrough(t *testing.T, memo *incremental.Memo, in render.Input, files map[string]string) *render.Result {
	t.Helper()
	in.Set, in.Options = loadFiles(t, files, nil), render.DefaultOptions()
	return rendertest.Render(memo, in)
}

func TestFailoverPrimaryBackup(t *testing.T) {
	files := func(primary string, since time.Time, purge string) map[string]string {
		return map[string]string{
			"clusters.yaml": readyCluster("m1", primary, since) + readyCluster("m2", "True", t0.Add(-time.Hour)),
			"app.yaml":      nginx,
			"pp.yaml":       failoverPolicy(purge),
		}
	}
	first := renderAt(t, t0, nil, files("True", t0.Add(-time.Hour), "Gracefully"))
	if diff := cmp.Diff(map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}}, placement(first)); diff != "" {
		t.Fatalf("healthy primary (-want +got):\n%s", diff)
	}
	prev := render.PreviousFromWorks(first.Works)
	down := t0.Add(-5 * time.Second)

	within := renderAt(t, t0, prev, files("Unknown", down, "Gracefully"))
	if diff := cmp.Diff(placement(first), placement(within)); diff != "" {
		t.Errorf("within tolerationSeconds nothing moves (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		purge string
		want  map[string][]string
	}{
		{"Gracefully", map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Graciously", map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Never", map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Directly", map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Immediately", map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}},
	} {
		t.Run(tc.purge, func(t *testing.T) {
			moved := renderAt(t, t0.Add(10*time.Second), prev, files("Unknown", down, tc.purge))
			if diff := cmp.Diff(tc.want, placement(moved)); diff != "" {
				t.Errorf("after tolerationSeconds (-want +got):\n%s", diff)
			}
			if len(moved.Bindings) == 0 || len(moved.Bindings[0].Evictions) != 1 {
				t.Fatalf("want one eviction recorded, got %+v", moved.Bindings)
			}
		})
	}
}

func TestFailoverGracefulCopyEndsAndNoFlapBack(t *testing.T) {
	files := func(primary string, since time.Time) map[string]string {
		return map[string]string{
			"clusters.yaml": readyCluster("m1", primary, since) + readyCluster("m2", "True", t0.Add(-time.Hour)),
			"app.yaml":      nginx,
			"pp.yaml":       failoverPolicy("Gracefully"),
		}
	}
	first := renderAt(t, t0, nil, files("True", t0.Add(-time.Hour)))
	moved := renderAt(t, t0.Add(20*time.Second), render.PreviousFromWorks(first.Works), files("Unknown", t0))
	old := object(t, moved, "m1", "Deployment.apps/demo/nginx")
	if old.GetAnnotations()[workv1alpha1.AnnotationPurgeMode] != "Gracefully" || old.GetAnnotations()[workv1alpha1.AnnotationEvictedUntil] == "" {
		t.Fatalf("the kept copy must carry the eviction: %v", old.GetAnnotations())
	}
	// The primary recovers before the grace period ends: the copy stays, and
	// the template stays on the backup (clusterAffinities never fall back).
	back := renderAt(t, t0.Add(30*time.Second), render.PreviousFromWorks(moved.Works), files("True", t0.Add(25*time.Second)))
	if diff := cmp.Diff(placement(moved), placement(back)); diff != "" {
		t.Errorf("during the grace period (-want +got):\n%s", diff)
	}
	// After the grace period (60 s) the old copy is gone for good.
	later := renderAt(t, t0.Add(2*time.Minute), render.PreviousFromWorks(back.Works), files("True", t0.Add(25*time.Second)))
	if diff := cmp.Diff(map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}, placement(later)); diff != "" {
		t.Errorf("after the grace period (-want +got):\n%s", diff)
	}
}

func TestNoFailoverSectionNeverMoves(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": readyCluster("m1", "False", t0.Add(-time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)),
		"app.yaml":      nginx,
		"pp.yaml":       pp("nginx", "  placement:\n    clusterAffinity: {clusterNames: [m1, m2]}\n"),
	}
	healthy := map[string]string{"clusters.yaml": readyCluster("m1", "True", t0.Add(-2*time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)),
		"app.yaml": nginx, "pp.yaml": files["pp.yaml"]}
	first := renderAt(t, t0.Add(-time.Hour), nil, healthy)
	got := renderAt(t, t0, render.PreviousFromWorks(first.Works), files)
	if diff := cmp.Diff(placement(first), placement(got)); diff != "" {
		t.Errorf("a policy without failover keeps its placement on a NotReady cluster (-want +got):\n%s", diff)
	}
}

func TestFailoverDividedKeepsTotal(t *testing.T) {
	clusters := func(m3 string) string {
		return readyCluster("m1", "True", t0.Add(-time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)) + readyCluster("m3", m3, t0.Add(-time.Minute))
	}
	policy := pp("nginx", `  failover:
    cluster: {purgeMode: Directly}
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [m1]}, weight: 2}
        - {targetCluster: {clusterNames: [m2, m3]}, weight: 1}
`)
	tmpl := strings.Replace(nginx, "replicas: 4", "replicas: 8", 1)
	first := renderAt(t, t0.Add(-time.Hour), nil, map[string]string{"c.yaml": clusters("True"), "app.yaml": tmpl, "pp.yaml": policy})
	want := map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=2"}, "m3": {"Deployment.apps/demo/nginx replicas=2"}}
	if diff := cmp.Diff(want, placement(first)); diff != "" {
		t.Fatalf("before (-want +got):\n%s", diff)
	}
	after := renderAt(t, t0, render.PreviousFromWorks(first.Works), map[string]string{"c.yaml": clusters("False"), "app.yaml": tmpl, "pp.yaml": policy})
	// 8 replicas at 2:1 over m1, m2 → 5/3 (Webster): the total is preserved.
	want = map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=5"}, "m2": {"Deployment.apps/demo/nginx replicas=3"}}
	if diff := cmp.Diff(want, placement(after)); diff != "" {
		t.Errorf("after m3 fails (-want +got):\n%s", diff)
	}
}

package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// Karmada's application failover: a template that runs unhealthy on a Ready
// cluster for longer than decisionConditions.tolerationSeconds leaves it, with
// the application's purge mode.
func TestApplicationFailoverMovesAnUnhealthyTemplate(t *testing.T) {
	files := func(purge string) map[string]string {
		return map[string]string{
			"clusters.yaml": readyCluster("m1", "True", t0.Add(-time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)),
			"app.yaml":      nginx,
			"pp.yaml":       failoverPolicy(purge),
		}
	}
	key := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "nginx"}
	first := renderAt(t, t0, nil, files("Directly"))
	onM1 := map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(onM1, placement(first)); diff != "" {
		t.Fatalf("first placement (-want +got):\n%s", diff)
	}
	prev := render.PreviousFromWorks(first.Works)
	sick := render.Unhealthy{"m1": {key: t0}}

	within := renderWith(t, render.Input{Previous: prev, Now: t0.Add(9 * time.Second), Unhealthy: sick}, files("Directly"))
	if diff := cmp.Diff(onM1, placement(within)); diff != "" {
		t.Errorf("within tolerationSeconds (10 s) nothing moves (-want +got):\n%s", diff)
	}
	other := render.Unhealthy{"m1": {workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "demo", Name: "x"}: t0}}
	if got := renderWith(t, render.Input{Previous: prev, Now: t0.Add(time.Hour), Unhealthy: other}, files("Directly")); !cmp.Equal(onM1, placement(got)) {
		t.Errorf("another template's health moved nginx: %v", placement(got))
	}

	for _, tc := range []struct {
		purge string
		want  map[string][]string
	}{
		{"Directly", map[string][]string{"m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Gracefully", map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
		{"Never", map[string][]string{"m1": {"Deployment.apps/demo/nginx replicas=4"}, "m2": {"Deployment.apps/demo/nginx replicas=4"}}},
	} {
		t.Run(tc.purge, func(t *testing.T) {
			moved := renderWith(t, render.Input{Previous: prev, Now: t0.Add(10 * time.Second), Unhealthy: sick}, files(tc.purge))
			if diff := cmp.Diff(tc.want, placement(moved)); diff != "" {
				t.Errorf("after tolerationSeconds (-want +got):\n%s", diff)
			}
			ev := moved.Bindings[0].Evictions
			if len(ev) != 1 || ev[0].Cluster != "m1" || !strings.Contains(ev[0].Reason, "application unhealthy on m1") || ev[0].PurgeMode != tc.purge {
				t.Fatalf("want one application eviction from m1 with purge mode %s, got %+v", tc.purge, ev)
			}
			if tc.purge == "Gracefully" && !ev[0].Until.Equal(t0.Add(70*time.Second)) {
				t.Errorf("grace period: want until %s, got %s", t0.Add(70*time.Second), ev[0].Until)
			}
		})
	}
}

// A cluster that is not Ready is cluster failover's to judge: health that
// a down member last reported never moves a template on its own.
func TestApplicationFailoverIgnoresNotReadyClusters(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": readyCluster("m1", "True", t0.Add(-time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)),
		"app.yaml":      nginx,
		"pp.yaml":       failoverPolicy("Directly"),
	}
	first := renderAt(t, t0, nil, files)
	key := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "nginx"}
	files["clusters.yaml"] = readyCluster("m1", "False", t0.Add(9*time.Second)) + readyCluster("m2", "True", t0.Add(-time.Hour))
	got := renderWith(t, render.Input{Previous: render.PreviousFromWorks(first.Works), Now: t0.Add(11 * time.Second),
		Unhealthy: render.Unhealthy{"m1": {key: t0}}}, files)
	for _, e := range got.Bindings[0].Evictions {
		if strings.Contains(e.Reason, "application unhealthy") {
			t.Errorf("a NotReady cluster got an application eviction: %+v", e)
		}
	}
	if diff := cmp.Diff(placement(first), placement(got)); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
}

// statePreservation: the value read from the evicted cluster's reported
// status becomes a label on the copy the template moves to, and stays on
// that cluster in later renders.
func TestApplicationFailoverPreservesState(t *testing.T) {
	policy := strings.Replace(failoverPolicy("Directly"), "      purgeMode: Directly\n",
		"      purgeMode: Directly\n      statePreservation:\n        rules:\n        - {aliasLabelName: failover.example.com/available, jsonPath: \"{.availableReplicas}\"}\n", 1)
	files := map[string]string{
		"clusters.yaml": readyCluster("m1", "True", t0.Add(-time.Hour)) + readyCluster("m2", "True", t0.Add(-time.Hour)),
		"app.yaml":      nginx,
		"pp.yaml":       policy,
	}
	key := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "nginx"}
	first := renderAt(t, t0, nil, files)
	moved := renderWith(t, render.Input{Previous: render.PreviousFromWorks(first.Works), Now: t0.Add(time.Minute),
		Unhealthy: render.Unhealthy{"m1": {key: t0}}, Reflected: render.Reflected{"m1": {key: {"availableReplicas": int64(3)}}}}, files)
	got := object(t, moved, "m2", "Deployment.apps/demo/nginx")
	if v := got.GetLabels()["failover.example.com/available"]; v != "3" {
		t.Fatalf("preserved label = %q, want 3 (labels %v)", v, got.GetLabels())
	}
	if ev := moved.Bindings[0].Evictions; len(ev) != 1 || ev[0].PreservedLabels["failover.example.com/available"] != "3" {
		t.Errorf("eviction = %+v", ev)
	}
	later := renderAt(t, t0.Add(2*time.Minute), render.PreviousFromWorks(moved.Works), files)
	if v := object(t, later, "m2", "Deployment.apps/demo/nginx").GetLabels()["failover.example.com/available"]; v != "3" {
		t.Errorf("a later render dropped the preserved label: %q", v)
	}
	if l := object(t, first, "m1", "Deployment.apps/demo/nginx").GetLabels(); l["failover.example.com/available"] != "" {
		t.Errorf("the first placement carries a preserved label: %v", l)
	}
}

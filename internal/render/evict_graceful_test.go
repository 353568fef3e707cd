package render_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

var nginxKey = workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "nginx"}

// healthyOn reports nginx healthy on the given clusters.
func healthyOn(clusters ...string) render.Health {
	h := render.Health{}
	for _, c := range clusters {
		h[c] = map[workv1alpha1.ObjectKey]bool{nginxKey: true}
	}
	return h
}

// evictedPrimary renders nginx on the primary m1, then fails it over to m2
// (m1 Unknown since t0, tolerationSeconds 10, grace period 60 s when
// Gracefully): it returns the files of a state (Ready of m1 and m2, the
// Deployment) and the render that moved the template.
func evictedPrimary(t *testing.T, purge string) (func(m1, m2 string, app string) map[string]string, *render.Result) {
	t.Helper()
	files := func(m1, m2 string, app string) map[string]string {
		since1, since2 := t0.Add(-time.Hour), t0.Add(-time.Hour)
		if m1 != "True" {
			since1 = t0
		}
		if m2 != "True" {
			since2 = t0.Add(25 * time.Second) // not for long enough to be evicted too
		}
		return map[string]string{
			"clusters.yaml": readyCluster("m1", m1, since1) + readyCluster("m2", m2, since2),
			"app.yaml":      app + "---\n" + nginxEnv,
			"pp.yaml":       failoverPolicy(purge),
		}
	}
	first := renderAt(t, t0, nil, files("True", "True", nginx))
	moved := renderAt(t, t0.Add(20*time.Second), render.PreviousFromWorks(first.Works), files("Unknown", "True", nginx))
	want := map[string][]string{
		"m1": {"ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=4"},
		"m2": {"ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=4"},
	}
	if diff := cmp.Diff(want, placement(moved)); diff != "" {
		t.Fatalf("failed over with the old copy kept (-want +got):\n%s", diff)
	}
	return files, moved
}

// evictions returns the evictions of nginx's binding.
func evictions(t *testing.T, res *render.Result) []render.Eviction {
	t.Helper()
	for _, b := range res.Bindings {
		if b.Key == nginxKey {
			return b.Evictions
		}
	}
	t.Fatalf("no binding for %s", nginxKey)
	return nil
}

func TestGracefulEvictionEndsWhenNewPlacementHealthy(t *testing.T) {
	files, moved := evictedPrimary(t, "Gracefully")
	onlyBackup := map[string][]string{"m2": {"ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=4"}}
	kept := placement(moved)
	newImage := strings.Replace(nginx, "nginx:1.27", "nginx:1.28", 1)
	for _, tc := range []struct {
		name      string
		health    render.Health
		m2, app   string
		want      map[string][]string
		wantEnded string
	}{
		{name: "backup healthy: the old copy and its dependency go", health: healthyOn("m2"), m2: "True", app: nginx,
			want: onlyBackup, wantEnded: render.EndedHealthy},
		{name: "primary back and healthy, backup healthy", health: healthyOn("m1", "m2"), m2: "True", app: nginx,
			want: onlyBackup, wantEnded: render.EndedHealthy},
		{name: "backup not reported healthy", health: render.Health{}, m2: "True", app: nginx, want: kept},
		{name: "only the old copy healthy", health: healthyOn("m1"), m2: "True", app: nginx, want: kept},
		{name: "no health known (plain render)", m2: "True", app: nginx, want: kept},
		{name: "backup healthy but not Ready", health: healthyOn("m2"), m2: "Unknown", app: nginx, want: kept},
		{name: "backup healthy at a copy the new commit changes", health: healthyOn("m2"), m2: "True", app: newImage, want: kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := render.Input{Previous: render.PreviousFromWorks(moved.Works), Now: t0.Add(30 * time.Second), Health: tc.health}
			got := renderWith(t, in, files("True", tc.m2, tc.app))
			if diff := cmp.Diff(tc.want, placement(got)); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
			ev := evictions(t, got)
			if len(ev) != 1 || ev[0].Ended != tc.wantEnded {
				t.Errorf("evictions = %+v, want one ended %q", ev, tc.wantEnded)
			}
		})
	}
}

// TestGracefulEvictionWaitsForEveryCluster spreads nginx over three
// clusters and fails m1: the eviction ends only when both m2 and m3 report
// healthy, and then in the very render that decides it, since their copies
// do not change.
func TestGracefulEvictionWaitsForEveryCluster(t *testing.T) {
	files := func(m1 string) map[string]string {
		since := t0.Add(-time.Hour)
		if m1 != "True" {
			since = t0
		}
		return map[string]string{
			"clusters.yaml": readyCluster("m1", m1, since) + readyCluster("m2", "True", t0.Add(-time.Hour)) + readyCluster("m3", "True", t0.Add(-time.Hour)),
			"app.yaml":      nginx,
			"pp.yaml": pp("nginx", `  propagateDeps: true
  failover:
    application:
      decisionConditions: {tolerationSeconds: 10}
      purgeMode: Gracefully
      gracePeriodSeconds: 60
  placement:
    clusterAffinity: {clusterNames: [m1, m2, m3]}
`),
		}
	}
	first := renderAt(t, t0, nil, files("True"))
	prev := render.PreviousFromWorks(first.Works)
	all := []string{"m1", "m2", "m3"}
	for _, tc := range []struct {
		health render.Health
		want   []string
	}{
		{healthyOn("m2"), all},
		{healthyOn("m3"), all},
		{healthyOn("m1", "m2"), all},
		{healthyOn("m2", "m3"), []string{"m2", "m3"}},
	} {
		got := renderWith(t, render.Input{Previous: prev, Now: t0.Add(20 * time.Second), Health: tc.health}, files("Unknown"))
		var clusters []string
		for _, w := range got.Works {
			clusters = append(clusters, w.Cluster)
		}
		if diff := cmp.Diff(tc.want, clusters); diff != "" {
			t.Errorf("healthy on %v: clusters (-want +got):\n%s", tc.health, diff)
		}
	}
}

func TestGracefulEvictionEndsAtGracePeriod(t *testing.T) {
	files, moved := evictedPrimary(t, "Gracefully")
	until := evictions(t, moved)[0].Until
	if want := t0.Add(80 * time.Second); !until.Equal(want) {
		t.Fatalf("grace period ends at %s, want %s", until, want)
	}
	for _, tc := range []struct {
		at        time.Time
		wantM1    bool
		wantEnded string
	}{
		{until.Add(-time.Second), true, ""},
		{until, false, render.EndedGracePeriod},
	} {
		// The backup never reports healthy: only time ends the eviction.
		in := render.Input{Previous: render.PreviousFromWorks(moved.Works), Now: tc.at, Health: render.Health{}}
		got := renderWith(t, in, files("True", "True", nginx))
		if _, kept := placement(got)["m1"]; kept != tc.wantM1 {
			t.Errorf("at %s: old copy kept = %v, want %v", tc.at.Sub(t0), kept, tc.wantM1)
		}
		if ev := evictions(t, got); len(ev) != 1 || ev[0].Ended != tc.wantEnded {
			t.Errorf("at %s: evictions = %+v, want one ended %q", tc.at.Sub(t0), ev, tc.wantEnded)
		}
	}
}

func TestNeverEvictionNeverEnds(t *testing.T) {
	files, moved := evictedPrimary(t, "Never")
	prev := render.PreviousFromWorks(moved.Works)
	for _, at := range []time.Duration{time.Minute, 24 * time.Hour, 365 * 24 * time.Hour} {
		got := renderWith(t, render.Input{Previous: prev, Now: t0.Add(at), Health: healthyOn("m1", "m2")}, files("True", "True", nginx))
		if diff := cmp.Diff(placement(moved), placement(got)); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", at, diff)
		}
		prev = render.PreviousFromWorks(got.Works)
	}
}

// TestEvictedCopyIsFrozen changes the template in Git after the failover:
// the backup gets the change, the copy kept on the primary stays exactly as
// it was rendered there, over render after render.
func TestEvictedCopyIsFrozen(t *testing.T) {
	for _, purge := range []string{"Gracefully", "Never"} {
		t.Run(purge, func(t *testing.T) {
			files, moved := evictedPrimary(t, purge)
			old := jsonOf(t, object(t, moved, "m1", "Deployment.apps/demo/nginx"))
			changed := strings.NewReplacer("nginx:1.27", "nginx:1.28", "replicas: 4", "replicas: 6").Replace(nginx)
			prev := render.PreviousFromWorks(moved.Works)
			for i, at := range []time.Duration{30 * time.Second, 40 * time.Second} {
				got := renderAt(t, t0.Add(at), prev, files("True", "True", changed))
				if diff := cmp.Diff(old, jsonOf(t, object(t, got, "m1", "Deployment.apps/demo/nginx"))); diff != "" {
					t.Errorf("render %d: the kept copy changed (-want +got):\n%s", i+1, diff)
				}
				backup := jsonOf(t, object(t, got, "m2", "Deployment.apps/demo/nginx"))
				if !strings.Contains(backup, "nginx:1.28") || !strings.Contains(backup, `"replicas":6`) {
					t.Errorf("render %d: the backup did not get the change: %s", i+1, backup)
				}
				prev = render.PreviousFromWorks(got.Works)
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestKeptCopyGoesWithItsCluster removes the evicted cluster from Git: no
// Work keeps a copy for it.
func TestKeptCopyGoesWithItsCluster(t *testing.T) {
	files, moved := evictedPrimary(t, "Never")
	gone := files("Unknown", "True", nginx)
	gone["clusters.yaml"] = readyCluster("m2", "True", t0.Add(-time.Hour))
	got := renderAt(t, t0.Add(30*time.Second), render.PreviousFromWorks(moved.Works), gone)
	want := map[string][]string{"m2": {"ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(want, placement(got)); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
}

// TestGracefulEvictionThroughMemo runs the failover with the controller's
// memo: the kept copy stays frozen, and goes once the backup is healthy.
func TestGracefulEvictionThroughMemo(t *testing.T) {
	memo := incremental.NewMemo()
	files, _ := evictedPrimary(t, "Gracefully")
	first := renderThrough(t, memo, render.Input{Now: t0}, files("True", "True", nginx))
	moved := renderThrough(t, memo, render.Input{Previous: render.PreviousFromWorks(first.Works), Now: t0.Add(20 * time.Second)},
		files("Unknown", "True", nginx))
	changed := strings.Replace(nginx, "nginx:1.27", "nginx:1.28", 1)
	kept := renderThrough(t, memo, render.Input{Previous: render.PreviousFromWorks(moved.Works), Now: t0.Add(25 * time.Second),
		Health: render.Health{}}, files("Unknown", "True", changed))
	if diff := cmp.Diff(jsonOf(t, object(t, moved, "m1", "Deployment.apps/demo/nginx")), jsonOf(t, object(t, kept, "m1", "Deployment.apps/demo/nginx"))); diff != "" {
		t.Errorf("the kept copy changed (-want +got):\n%s", diff)
	}
	ended := renderThrough(t, memo, render.Input{Previous: render.PreviousFromWorks(kept.Works), Now: t0.Add(30 * time.Second),
		Health: healthyOn("m2")}, files("Unknown", "True", changed))
	want := map[string][]string{"m2": {"ConfigMap.core/demo/nginx-env", "Deployment.apps/demo/nginx replicas=4"}}
	if diff := cmp.Diff(want, placement(ended)); diff != "" {
		t.Errorf("once the backup is healthy (-want +got):\n%s", diff)
	}
}

// TestEvictionReasonSurvivesAReread: the reason of a pending eviction is
// read back from the kept copy, so explain still says why after a restart.
func TestEvictionReasonSurvivesAReread(t *testing.T) {
	files, moved := evictedPrimary(t, "Gracefully")
	want := evictions(t, moved)
	if len(want) != 1 || want[0].Reason == "" {
		t.Fatalf("evictions after the failover: %+v, want one with a reason", want)
	}
	again := renderAt(t, t0.Add(21*time.Second), render.PreviousFromWorks(moved.Works), files("Unknown", "True", nginx))
	got := evictions(t, again)
	if len(got) != 1 || got[0].Reason != want[0].Reason {
		t.Fatalf("evictions after a re-read: %+v, want the reason %q kept", got, want[0].Reason)
	}
}

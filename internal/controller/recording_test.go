package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// statuses is a status store holding one status per cluster.
type statuses map[string]*workv1alpha1.WorkStatus

func (s statuses) GetStatus(_ context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	return s[cluster].DeepCopy(), nil
}

func (statuses) PutStatus(context.Context, string, *workv1alpha1.WorkStatus) error { return nil }

// webCopy is Deployment demo/web as rendered for a cluster; evicted marks
// it as the old copy of a Gracefully eviction.
func webCopy(evicted bool) *unstructured.Unstructured {
	ann := map[string]any{workv1alpha1.AnnotationTemplate: "Deployment.apps/demo/web", workv1alpha1.AnnotationPPName: "web",
		workv1alpha1.AnnotationPPNamespace: "demo", workv1alpha1.AnnotationScheduledReplicas: "1"}
	if evicted {
		ann[workv1alpha1.AnnotationEvictedAt] = "2026-01-01T00:00:00Z"
		ann[workv1alpha1.AnnotationEvictedUntil] = "2026-01-01T00:10:00Z"
		ann[workv1alpha1.AnnotationPurgeMode] = "Gracefully"
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo", "annotations": ann}}}
}

// TestHealthReadsOnlyTheRecordedWork pins when a cluster vouches for a
// template: its status names the recorded Work's digest and the object is
// Current.
func TestHealthReadsOnlyTheRecordedWork(t *testing.T) {
	web := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}
	rws := []render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{webCopy(true)}},
		{Cluster: "m2", Objects: []*unstructured.Unstructured{webCopy(false)}}}
	var ws []*workv1alpha1.Work
	for _, rw := range rws {
		w, err := toWork(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: rw.Cluster}}, "rev", rw.Objects, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	rec := newRecording(ws, rws, nil)
	status := func(digest string, health workv1alpha1.Health) *workv1alpha1.WorkStatus {
		return &workv1alpha1.WorkStatus{AppliedDigest: digest, Objects: []workv1alpha1.ObjectResult{{
			ObjectRef: workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}, Version: "v1"},
			Action:    "Created", Health: health}}}
	}
	for _, tc := range []struct {
		name string
		m2   *workv1alpha1.WorkStatus
		want render.Health
	}{
		{"applied and Current", status(workv1alpha1.Digest(ws[1]), "Current"), render.Health{"m2": {web: true}}},
		{"applied, still progressing", status(workv1alpha1.Digest(ws[1]), "InProgress"), render.Health{}},
		{"Current at an older Work", status("0ld", "Current"), render.Health{}},
		{"never applied", nil, render.Health{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(DefaultOptions(), nil, nil, statuses{"m2": tc.m2}, nil, logr.Discard())
			got, _, _ := c.health(context.Background(), rec, &load.Set{}, time.Time{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}

	// Without a Gracefully eviction pending, no status is read at all.
	calm := newRecording(ws[1:], rws[1:], nil)
	if got, unhealthy, _ := New(DefaultOptions(), nil, nil, nil, nil, logr.Discard()).health(context.Background(), calm, &load.Set{}, time.Time{}); got != nil || unhealthy != nil {
		t.Errorf("health without a pending eviction or application failover = %v, %v; want nil", got, unhealthy)
	}
}

// webOnM1 is a recording whose one Work gives m1 Deployment demo/web.
func webOnM1(t *testing.T) (*workv1alpha1.Work, *recording) {
	t.Helper()
	rws := []render.Work{{Cluster: "m1", Objects: []*unstructured.Unstructured{webCopy(false)}}}
	w, err := toWork(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}, "rev", rws[0].Objects, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, newRecording([]*workv1alpha1.Work{w}, rws, nil)
}

// TestUnhealthyClockStartsAndStops pins how long a template counts as
// unhealthy for application failover: from the first InProgress or Failed
// report of the recorded Work, until any other report or none.
func TestUnhealthyClockStartsAndStops(t *testing.T) {
	web := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}
	w, rec := webOnM1(t)
	set := &load.Set{Propagations: []load.Propagation{{Policy: &policyv1alpha1.PropagationPolicy{Spec: policyv1alpha1.PropagationSpec{
		Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{}}}}}}}
	report := statuses{}
	c := New(DefaultOptions(), nil, nil, report, nil, logr.Discard())
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step := func(health workv1alpha1.Health, digest string, at time.Time, want render.Unhealthy) {
		t.Helper()
		report["m1"] = &workv1alpha1.WorkStatus{AppliedDigest: digest, Objects: []workv1alpha1.ObjectResult{{
			ObjectRef: workv1alpha1.ObjectRef{ObjectKey: web, Version: "v1"}, Action: "Created", Health: health}}}
		_, got, _ := c.health(context.Background(), rec, set, at)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("at %s with %s (-want +got):\n%s", at.Format(time.TimeOnly), health, diff)
		}
	}
	digest := workv1alpha1.Digest(w)
	step("InProgress", digest, t1, render.Unhealthy{"m1": {web: t1}})
	step("Failed", digest, t1.Add(time.Minute), render.Unhealthy{"m1": {web: t1}})
	step("Current", digest, t1.Add(2*time.Minute), render.Unhealthy{})
	step("Failed", digest, t1.Add(3*time.Minute), render.Unhealthy{"m1": {web: t1.Add(3 * time.Minute)}})
	step("Failed", "0ld", t1.Add(4*time.Minute), render.Unhealthy{})
}

// offline is a source that cannot be fetched; it reports each attempt.
type offline chan struct{}

func (o offline) Fetch(ctx context.Context) (Snapshot, error) {
	select {
	case o <- struct{}{}:
	case <-ctx.Done():
	}
	return Snapshot{}, errors.New("offline")
}

func (o offline) ReadRevision(context.Context, string) (Snapshot, error) {
	return Snapshot{}, errors.New("offline")
}

// TestRunRechecksWhileGracefulEvictionPending pins that a pending Gracefully
// eviction brings the next pass after HealthInterval, long before the next
// poll, so the eviction can end without a commit.
func TestRunRechecksWhileGracefulEvictionPending(t *testing.T) {
	opts := DefaultOptions()
	// Shorter than the first retry of the offline source's failed fetch.
	opts.Interval, opts.Deliver.HealthInterval = time.Hour, 500*time.Millisecond
	passes := make(offline)
	c := New(opts, passes, nil, nil, nil, logr.Discard())
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.clock = clk
	kept := []*unstructured.Unstructured{webCopy(true)}
	w, err := toWork(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}, "rev", kept, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.recorded = newRecording([]*workv1alpha1.Work{w}, []render.Work{{Cluster: "m1", Objects: kept}}, nil)
	wait, next := runOffline(t, c, passes)
	wait("the first pass", next)
	wait("the poll ticker, the recheck and the retry timers", func() bool { return clk.Waiters() == 3 })
	clk.Step(opts.Deliver.HealthInterval)
	wait("a pass after HealthInterval", next)
}

// runOffline runs c, whose source is passes, until the test ends; wait
// polls a condition until a 10 s deadline, next reports whether a pass
// started since it was last called.
func runOffline(t *testing.T, c *Controller, passes offline) (wait func(string, func() bool), next func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.After(10 * time.Second)
	wait = func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			case <-time.After(time.Millisecond):
			}
		}
	}
	next = func() bool {
		select {
		case <-passes:
			return true
		default:
			return false
		}
	}
	return wait, next
}

// TestHealthReadsReflectedStatusForStatePreservation pins that the status
// a cluster reported of a template reaches render when a policy preserves
// state across failover, and only then.
func TestHealthReadsReflectedStatusForStatePreservation(t *testing.T) {
	web := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}
	w, rec := webOnM1(t)
	report := statuses{"m1": {AppliedDigest: workv1alpha1.Digest(w), Objects: []workv1alpha1.ObjectResult{{
		ObjectRef: workv1alpha1.ObjectRef{ObjectKey: web, Version: "v1"}, Action: "Created", Health: "Current",
		Status: &runtime.RawExtension{Raw: []byte(`{"availableReplicas":3}`)}}}}}
	c := New(DefaultOptions(), nil, nil, report, nil, logr.Discard())
	preserving := &load.Set{Propagations: []load.Propagation{{Policy: &policyv1alpha1.PropagationPolicy{Spec: policyv1alpha1.PropagationSpec{
		Failover: &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{
			StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "a", JSONPath: "{.availableReplicas}"}}}}}}}}}}
	_, _, got := c.health(context.Background(), rec, preserving, time.Time{})
	if diff := cmp.Diff(render.Reflected{"m1": {web: {"availableReplicas": float64(3)}}}, got); diff != "" {
		t.Errorf("reflected (-want +got):\n%s", diff)
	}
	if _, _, got := c.health(context.Background(), rec, &load.Set{}, time.Time{}); got != nil {
		t.Errorf("reflected read without statePreservation: %v", got)
	}
}

// TestRunRetriesAFailedFetchSoon pins that a pass whose fetch failed is
// retried after one second, then two, long before the next poll: a webhook
// whose fetch met a passing error must not wait an hour.
func TestRunRetriesAFailedFetchSoon(t *testing.T) {
	opts := DefaultOptions()
	opts.Interval = time.Hour
	passes := make(offline)
	c := New(opts, passes, nil, nil, nil, logr.Discard())
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.clock = clk
	wait, next := runOffline(t, c, passes)
	wait("the first pass", next)
	for _, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		wait("the poll ticker and the retry timer", func() bool { return clk.Waiters() == 2 })
		// Run is now blocked in its select; no pass is on its way.
		clk.Step(delay - time.Millisecond)
		if next() {
			t.Fatalf("a retry came before %s", delay)
		}
		clk.Step(time.Millisecond)
		wait(fmt.Sprintf("the retry after %s", delay), next)
	}
}

func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		n        int
		interval time.Duration
		want     time.Duration
	}{
		{1, time.Hour, time.Second},
		{3, time.Hour, 4 * time.Second},
		{9, time.Hour, 256 * time.Second},
		{10, time.Hour, 5 * time.Minute},
		{60, time.Hour, 5 * time.Minute},
		{4, 3 * time.Second, 3 * time.Second},
	} {
		if got := retryDelay(tc.n, tc.interval); got != tc.want {
			t.Errorf("retryDelay(%d, %s) = %s, want %s", tc.n, tc.interval, got, tc.want)
		}
	}
}

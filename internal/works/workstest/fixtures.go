// Package workstest holds what the tests of the works stores share: a hub
// apiserver serving the Work CRD, bare Git remotes, Works and statuses to
// store, and the checks every store must pass; and Store, a works store in
// memory for the tests of the packages that read or write Works.
package workstest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// WorksBranch is the default work branch.
const WorksBranch = plumbing.ReferenceName("refs/heads/propagit/works")

// Obj is a manifest; extra fields are merged at the top level.
func Obj(apiVersion, kind, ns, name string, extra map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// ConfigMap is a namespaced manifest with data.
func ConfigMap(ns, name string, data map[string]any) map[string]any {
	return Obj("v1", "ConfigMap", ns, name, map[string]any{"data": data})
}

// NewWork builds a Work of cluster at rev holding objs.
func NewWork(cluster, rev string, objs ...map[string]any) *workv1alpha1.Work {
	w := works.NewWork(cluster, workv1alpha1.WorkSpec{FormatVersion: workv1alpha1.FormatVersion, SourceRevision: rev})
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: raw})
	}
	return w
}

// Fleet returns Works for n clusters ("c0"…) with perCluster ConfigMaps
// each, at rev, the data holding value.
func Fleet(n, perCluster int, rev, value string) []*workv1alpha1.Work {
	var out []*workv1alpha1.Work
	for i := range n {
		var objs []map[string]any
		for j := range perCluster {
			objs = append(objs, ConfigMap("app", fmt.Sprintf("cm-%03d", j), map[string]any{"v": value, "i": fmt.Sprint(j)}))
		}
		out = append(out, NewWork(fmt.Sprintf("c%d", i), rev, objs...))
	}
	return out
}

// Status is a status at revision rev whose Ready condition is ready,
// with heartbeat at.
func Status(rev string, ready metav1.ConditionStatus, at time.Time) *workv1alpha1.WorkStatus {
	return &workv1alpha1.WorkStatus{
		AppliedRevision: rev,
		Heartbeat:       &metav1.Time{Time: at},
		AgentVersion:    "v0.1.0",
		Conditions: []metav1.Condition{
			{Type: "Applied", Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: metav1.Time{Time: at}},
			{Type: "Ready", Status: ready, Reason: "Applied", Message: "applied", LastTransitionTime: metav1.Time{Time: at}},
		},
		Inventory: []workv1alpha1.ObjectRef{
			{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: "a"}, Version: "v1"},
			{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: "b"}, Version: "v1"},
		},
	}
}

// Ctx is a context that ends with t, or after two minutes.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Annotated returns the Works of Fleet(2, 1, rev, "a") with c0 annotated
// as ready (the readiness a render saw).
func Annotated(rev, ready string) []*workv1alpha1.Work {
	ws := Fleet(2, 1, rev, "a")
	ws[0].Annotations = map[string]string{workv1alpha1.AnnotationClusterReady: ready}
	return ws
}

// CheckAnnotationSteps puts Works whose only change is propagit's
// annotations: each change is written (and only to that Work), and read
// back.
func CheckAnnotationSteps(t *testing.T, s works.Store) {
	t.Helper()
	ctx := Ctx(t)
	for _, step := range []struct {
		rev, ready  string
		wantChanged []string
	}{
		{"rev1", "True", []string{"c0", "c1"}},
		{"rev1", "True", nil},
		{"rev2", "Unknown", []string{"c0"}},
		{"rev3", "Unknown", nil},
	} {
		changed, err := s.Put(ctx, step.rev, Annotated(step.rev, step.ready))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.wantChanged, changed); diff != "" {
			t.Errorf("Ready %s at %s: changed (-want +got):\n%s", step.ready, step.rev, diff)
		}
		ws, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := ws[0].Annotations[workv1alpha1.AnnotationClusterReady]; got != step.ready {
			t.Errorf("Ready %s at %s: stored %q", step.ready, step.rev, got)
		}
	}
}

// T0 is the time the statuses of the tests are written at.
var T0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// Decoded returns w with its manifests decoded, for comparison.
func Decoded(t *testing.T, w *workv1alpha1.Work) map[string]any {
	t.Helper()
	var objs []any
	for _, m := range w.Spec.Manifests {
		var o any
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return map[string]any{"meta": w.TypeMeta, "name": w.Name, "cluster": w.Spec.Cluster, "rev": w.Spec.SourceRevision,
		"format": w.Spec.FormatVersion, "suspended": w.Spec.Suspended, "manifests": objs}
}

// Reversed returns st with its lists in reverse order.
func Reversed(st *workv1alpha1.WorkStatus) *workv1alpha1.WorkStatus {
	slices.Reverse(st.Inventory)
	slices.Reverse(st.Conditions)
	return st
}

// CheckRecorderHeartbeat: a store with no heartbeat reads zero; each
// heartbeat written is read back (to the second, as Git keeps commit
// times), the newest replacing the one before, with the refused source
// revision it carries, its reason and since when: a refusal is read back
// as written, a heartbeat without one clears it, and a reason with
// control characters or longer than works.MaxRefusedReason is read back
// without them and cut.
func CheckRecorderHeartbeat(t *testing.T, s works.RecorderHeartbeats) {
	t.Helper()
	ctx := Ctx(t)
	if got, err := s.RecorderHeartbeat(ctx); err != nil || got != (works.RecorderState{}) {
		t.Fatalf("heartbeat before any = %+v, %v; want zero", got, err)
	}
	t0 := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	rev := strings.Repeat("9a70926e", 5)
	long := strings.Repeat("é", works.MaxRefusedReason)
	for _, tc := range []struct {
		name      string
		put, want works.RecorderState
	}{
		{"first", works.RecorderState{At: t0}, works.RecorderState{At: t0}},
		{"refused", works.RecorderState{At: t0.Add(time.Minute), RefusedRevision: rev, RefusedReason: "commit 9a70926: not signed", RefusedSince: t0.Add(30 * time.Second)},
			works.RecorderState{At: t0.Add(time.Minute), RefusedRevision: rev, RefusedReason: "commit 9a70926: not signed", RefusedSince: t0.Add(30 * time.Second)}},
		{"still refused", works.RecorderState{At: t0.Add(2 * time.Minute), RefusedRevision: rev, RefusedReason: "commit 9a70926: not signed", RefusedSince: t0.Add(30 * time.Second)},
			works.RecorderState{At: t0.Add(2 * time.Minute), RefusedRevision: rev, RefusedReason: "commit 9a70926: not signed", RefusedSince: t0.Add(30 * time.Second)}},
		{"cleared", works.RecorderState{At: t0.Add(3 * time.Minute)}, works.RecorderState{At: t0.Add(3 * time.Minute)}},
		{"control characters", works.RecorderState{At: t0.Add(4 * time.Minute), RefusedRevision: rev, RefusedReason: "a\nb\x1b]0;x\a\u202ec", RefusedSince: t0},
			works.RecorderState{At: t0.Add(4 * time.Minute), RefusedRevision: rev, RefusedReason: "a b]0;xc", RefusedSince: t0}},
		{"long reason", works.RecorderState{At: t0.Add(5 * time.Minute), RefusedRevision: rev, RefusedReason: long, RefusedSince: t0},
			works.RecorderState{At: t0.Add(5 * time.Minute), RefusedRevision: rev, RefusedReason: long[:works.MaxRefusedReason-len("…")-1] + "…", RefusedSince: t0}},
		{"not a revision", works.RecorderState{At: t0.Add(6 * time.Minute), RefusedRevision: "main", RefusedReason: "x", RefusedSince: t0},
			works.RecorderState{At: t0.Add(6 * time.Minute)}},
	} {
		if err := s.PutRecorderHeartbeat(ctx, tc.put); err != nil {
			t.Fatal(err)
		}
		got, err := s.RecorderHeartbeat(ctx)
		if err != nil || !got.At.Equal(tc.want.At) || !got.RefusedSince.Equal(tc.want.RefusedSince) ||
			got.RefusedRevision != tc.want.RefusedRevision || got.RefusedReason != tc.want.RefusedReason {
			t.Errorf("%s: heartbeat = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// CheckRolloutStates checks a works.RolloutStates: nothing before the
// first write, then each write read back as written, the last one winning.
func CheckRolloutStates(t *testing.T, s works.RolloutStates) {
	t.Helper()
	ctx := Ctx(t)
	if data, err := s.Rollouts(ctx); err != nil || data != nil {
		t.Fatalf("rollouts before any = %q, %v; want none", data, err)
	}
	for _, doc := range []string{`{"rollouts":[{"policy":"a","phase":"Progressing"}]}`, `{"rollouts":[]}`, `{"rollouts":[{"policy":"b","phase":"Complete"}]}`} {
		if err := s.PutRollouts(ctx, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Rollouts(ctx)
		if err != nil || string(got) != doc {
			t.Errorf("rollouts = %q, %v; want %q", got, err, doc)
		}
	}
}

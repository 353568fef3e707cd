package status

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func deployment(t *testing.T, name string, scheduled, replicas int) runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "demo", "annotations": map[string]any{
			"propagit.io/template": "Deployment.apps/demo/" + name, "propagit.io/scheduled-replicas": itoa(scheduled)}},
		"spec": map[string]any{"replicas": replicas},
	})
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func work(cluster, rev string, manifests ...runtime.RawExtension) *workv1alpha1.Work {
	return &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: cluster, SourceRevision: rev, Manifests: manifests}}
}

func status(ready metav1.ConditionStatus, applied string, health workv1alpha1.Health) *workv1alpha1.WorkStatus {
	return &workv1alpha1.WorkStatus{AppliedRevision: applied,
		Conditions: []metav1.Condition{{Type: "Ready", Status: ready, Message: "m"}},
		Objects:    []workv1alpha1.ObjectResult{{ObjectRef: workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}, Version: "v1"}, Action: "Created", Health: health}}}
}

// TestBuildCountsOnlyAppliedAndHealthy pins that "merged" never reads as
// "running": a cluster counts only when it runs the wanted revision, Ready.
func TestBuildCountsOnlyAppliedAndHealthy(t *testing.T) {
	rep, err := Build([]Input{
		{Work: work("m1", "abc1234567", deployment(t, "web", 2, 2)), Status: status("True", "abc1234567", "Current"), Mode: "Push"},
		{Work: work("m2", "abc1234567", deployment(t, "web", 2, 3)), Status: status("True", "0ld0000000", "Current"), Mode: "Pull"},
		{Work: work("m3", "abc1234567", deployment(t, "web", 2, 2)), Status: status("Unknown", "abc1234567", "InProgress"), Mode: "Push"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "abc1234: 1/3 clusters applied and healthy, 1 not ready"; rep.Summary != want {
		t.Errorf("summary = %q, want %q", rep.Summary, want)
	}
	want := []TemplateRow{{Template: "Deployment.apps/demo/web", Clusters: []string{"m1", "m2", "m3"}, DesiredReplicas: 7, ReadyReplicas: 5, Workload: true}}
	if diff := cmp.Diff(want, rep.Templates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if rep.Clusters[1].Mode != "Pull" || rep.Clusters[1].AppliedRevision != "0ld0000000" {
		t.Errorf("cluster rows lost mode or applied revision: %+v", rep.Clusters[1])
	}
}

// TestBuildListsNewestDriftFirst: drift from every member, newest first,
// with what changed and who changed it.
func TestBuildListsNewestDriftFirst(t *testing.T) {
	at := func(min int) metav1.Time { return metav1.Date(2026, 11, 29, 12, min, 0, 0, time.UTC) }
	web := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}}
	st1, st2 := status("True", "abc", "Current"), status("True", "abc", "Current")
	st1.Drift = []workv1alpha1.DriftRecord{{ObjectRef: web, Fields: []string{"spec.replicas"}, Manager: "kubectl-edit", Action: "Corrected", Time: at(1)}}
	st2.Drift = []workv1alpha1.DriftRecord{{ObjectRef: web, Deleted: true, Action: "Recreated", Time: at(2)}}
	rep, err := Build([]Input{{Work: work("m1", "abc"), Status: st1}, {Work: work("m2", "abc"), Status: st2}}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []DriftRow{
		{Cluster: "m2", Object: "Deployment.apps/demo/web", Deleted: true, Action: "Recreated", Time: at(2).Time},
		{Cluster: "m1", Object: "Deployment.apps/demo/web", Fields: []string{"spec.replicas"}, Manager: "kubectl-edit", Action: "Corrected", Time: at(1).Time},
	}
	if diff := cmp.Diff(want, rep.Drift); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
	if rep.Clusters[0].Drift != 1 || rep.Clusters[1].Drift != 1 {
		t.Errorf("drift counts per cluster: %+v", rep.Clusters)
	}
}

// TestBuildCountsHealthyObjectsOfTheWorkOnly: a member that has not answered
// since its Work dropped an object still reports that object; it is not
// counted as a healthy object of the Work.
func TestBuildCountsHealthyObjectsOfTheWorkOnly(t *testing.T) {
	st := status("Unknown", "abc", "Current")
	old := st.Objects[0]
	old.Name = "old"
	st.Objects = append(st.Objects, old)
	rep, err := Build([]Input{{Work: work("m1", "abc", deployment(t, "web", 1, 1)), Status: st}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Clusters[0]; got.Objects != 1 || got.Healthy != 1 {
		t.Errorf("objects %d, healthy %d; want 1 and 1", got.Objects, got.Healthy)
	}
}

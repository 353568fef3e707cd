package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestBuildShowsClusterReadinessAndTaints pins that each cluster row shows
// the cluster as the controller last rendered for it, next to (and apart
// from) whether its Work is applied and healthy.
func TestBuildShowsClusterReadinessAndTaints(t *testing.T) {
	down := work("m1", "abc1234567", deployment(t, "web", 1, 1))
	down.Annotations = map[string]string{workv1alpha1.AnnotationClusterReady: "Unknown",
		workv1alpha1.AnnotationClusterTaints: "maintenance=true:NoSchedule,cluster.karmada.io/unreachable:NoSchedule,cluster.karmada.io/unreachable:NoExecute"}
	up := work("m2", "abc1234567", deployment(t, "web", 1, 1))
	up.Annotations = map[string]string{workv1alpha1.AnnotationClusterReady: "True"}
	old := work("m3", "abc1234567") // recorded before the controller annotated Works
	rep, err := Build([]Input{
		{Work: down, Status: status("False", "0ld0000000", "Current"), Mode: "Push"},
		{Work: up, Status: status("True", "abc1234567", "Current"), Mode: "Push"},
		{Work: old, Status: status("True", "abc1234567", "Current"), Mode: "Pull"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ClusterReady, Ready string
		Taints              []string
	}
	var got []row
	for _, c := range rep.Clusters {
		got = append(got, row{c.ClusterReady, c.Ready, c.Taints})
	}
	want := []row{
		{"Unknown", "False", []string{"maintenance=true:NoSchedule", "cluster.karmada.io/unreachable:NoSchedule", "cluster.karmada.io/unreachable:NoExecute"}},
		{"True", "True", nil},
		{"", "True", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster rows (-want +got):\n%s", diff)
	}
}

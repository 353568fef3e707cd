package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestBuildListsTemplatesPlacedNowhere pins that a template the scheduler
// could not place shows in the report once, however many Works carry the
// fleet-wide list, while it has no Work of its own.
func TestBuildListsTemplatesPlacedNowhere(t *testing.T) {
	failed := "Deployment.apps/demo/big: no cluster fits: m1: insufficient cpu; m2: insufficient cpu (placed nowhere)\n" +
		"Deployment.apps/demo/web: spread constraint cannot be met (keeps its previous placement)"
	var inputs []Input
	for _, c := range []string{"m1", "m2"} {
		w := work(c, "abc1234567")
		w.Annotations = map[string]string{workv1alpha1.AnnotationScheduleErrors: failed}
		inputs = append(inputs, Input{Work: w, Status: status("True", "abc1234567", "Current"), Mode: "Push"})
	}
	rep, err := Build(inputs, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Deployment.apps/demo/big: no cluster fits: m1: insufficient cpu; m2: insufficient cpu (placed nowhere)",
		"Deployment.apps/demo/web: spread constraint cannot be met (keeps its previous placement)",
	}
	if diff := cmp.Diff(want, rep.ScheduleErrors); diff != "" {
		t.Errorf("schedule errors (-want +got):\n%s", diff)
	}
}

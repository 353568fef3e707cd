package controller

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// TestScheduleProblemsRecordedOnEveryWorkAndLoggedOnce pins where a
// template the scheduler could not place is reported: on every Work (it has
// none of its own), in the log once while it lasts.
func TestScheduleProblemsRecordedOnEveryWorkAndLoggedOnce(t *testing.T) {
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	c := New(DefaultOptions(), nil, nil, nil, nil, log)
	big := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "big"}
	res := &render.Result{
		Clusters: []*clusterv1alpha1.Cluster{{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "m2"}}},
		Bindings: []*render.Binding{{Key: big, ScheduleError: "no cluster fits"}},
	}
	for pass := range 2 {
		problems := c.renderProblems(res)
		for _, cl := range []string{"m1", "m2"} {
			if got, want := problems[cl][workv1alpha1.AnnotationScheduleErrors], "Deployment.apps/demo/big: no cluster fits (placed nowhere)"; got != want {
				t.Errorf("pass %d, %s: annotation %q, want %q", pass, cl, got, want)
			}
		}
	}
	n := 0
	for _, l := range logged {
		if strings.Contains(l, "could not be scheduled") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("logged %d times over two passes, want once: %q", n, logged)
	}
	res.Bindings[0].ScheduleError = ""
	if got := c.renderProblems(res)["m1"]; got[workv1alpha1.AnnotationScheduleErrors] != "" {
		t.Errorf("a scheduled template still reported: %v", got)
	}
}

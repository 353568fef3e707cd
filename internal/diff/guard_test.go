package diff

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
)

func cms(n int) map[workv1alpha1.ObjectKey]*unstructured.Unstructured {
	out := map[workv1alpha1.ObjectKey]*unstructured.Unstructured{}
	for i := range n {
		out[workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: fmt.Sprint("cm-", i)}] = &unstructured.Unstructured{}
	}
	return out
}

// A change that deletes most of a cluster is announced in the pull request
// as one the controller will hold, with the trailer that releases it.
func TestPruneHoldsWarnInThePullRequest(t *testing.T) {
	base := placement{"member1": cms(10), "member2": cms(10)}
	head := placement{"member1": cms(2), "member2": cms(9)}
	holds := pruneHolds(base, head, guard.DefaultOptions())
	if len(holds) != 1 || holds[0] != (PruneHold{Cluster: "member1", Removed: 8, Total: 10}) {
		t.Fatalf("holds = %+v, want member1 8 of 10", holds)
	}
	r := &Report{Clusters: []Cluster{{Name: "member1"}}, PruneHolds: holds}
	for name, out := range map[string]string{"text": r.Text(), "markdown": r.Markdown(65536)} {
		if !strings.Contains(out, "prune guard will hold this change on") || !strings.Contains(out, guard.AllowTrailer) ||
			!strings.Contains(out, "8 of 10") {
			t.Errorf("%s output does not announce the hold:\n%s", name, out)
		}
	}
	if off := pruneHolds(base, head, guard.Options{MaxPercent: 100}); len(off) != 0 {
		t.Errorf("with the guard off: holds %+v, want none", off)
	}
}

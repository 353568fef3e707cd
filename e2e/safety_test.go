package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/testenv"
)

// TestSafetyPruneGuardHoldsALargeDeletion commits a change that deletes
// four of a member's six objects (five ConfigMaps and their Namespace: 67%,
// more than the default 50%). The
// member must keep running the previous revision untouched (same UIDs),
// `propagit status` must say why, and the commit that acknowledges the
// deletion through Git (the Propagit-Allow-Prune trailer) applies it.
func TestSafetyPruneGuardHoldsALargeDeletion(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	ns := randomNamespace("guard")
	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name)
	names := []string{"a", "b", "c", "d", "e"}
	for _, n := range names {
		co.Write(fleetDir+"/cm-"+n+".yaml", e2etest.ConfigMapYAML(ns, n, "v1"))
	}
	rev1 := co.CommitPush("five ConfigMaps")
	ctrl := startController(t, newSetup(t, remote, m1))
	before := waitConfigMaps(t, []*testenv.Member{m1}, ns, names)
	reader.waitApplied(rev1, m1.Name)

	for _, n := range names[1:] {
		co.Remove(fleetDir + "/cm-" + n + ".yaml")
	}
	rev2 := co.CommitPush("drop four ConfigMaps")
	ctrl.waitRevision(rev2)
	// The hold is visible where people look: the status row of the member.
	eventually(t, converge, func() (bool, string) {
		rep := reader.report(t)
		for _, row := range rep.Clusters {
			if row.Name == m1.Name {
				ok := strings.Contains(row.PruneHeld, "would delete 4 of 6 objects") && strings.Contains(row.PruneHeld, guard.AllowTrailer) &&
					strings.Contains(row.Message, "prune held")
				return ok, fmt.Sprintf("status row: held %q, message %q", row.PruneHeld, row.Message)
			}
		}
		return false, "no status row for " + m1.Name
	})
	// Nothing was deleted or recreated, and the member still reports rev1.
	held := waitConfigMaps(t, []*testenv.Member{m1}, ns, names)
	checkSameUIDs(t, "while held", before, held, names)
	if st, err := reader.get(m1.Name); err != nil || st.AppliedRevision != rev1 {
		t.Fatalf("while held: applied %v (err %v), want %s", st, err, e2etest.Short(rev1))
	}

	// The author acknowledges it through Git.
	co.Write("ACKNOWLEDGED.md", "the four ConfigMaps go\n")
	rev3 := co.CommitPush("acknowledge the prune\n\n" + guard.AllowTrailer + ": true\n")
	ctrl.waitRevision(rev3)
	after := waitConfigMaps(t, []*testenv.Member{m1}, ns, names[:1])
	checkSameUIDs(t, "after the acknowledgement", before, after, names[:1])
	ws, err := reader.works()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if h := w.Annotations[workv1alpha1.AnnotationPruneHeld]; h != "" {
			t.Errorf("after the acknowledgement the Work of %s still says held: %q", w.Spec.Cluster, h)
		}
	}
}

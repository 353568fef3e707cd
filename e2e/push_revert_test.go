package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestPushRevertAfterFailedApply pushes a commit that half applies (one
// new ConfigMap is created, another clashes with a hand-made object and is
// refused), then reverts it: the member must go back to exactly the
// reverted content, so the ConfigMap the failed apply created is pruned,
// and the hand-made object is never touched.
func TestPushRevertAfterFailedApply(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	ns := randomNamespace("revert")
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name)
	co.Write(fleetDir+"/keep.yaml", e2etest.ConfigMapYAML(ns, "keep", "kept"))
	rev1 := co.CommitPush("one ConfigMap")
	ctrl := startController(t, newSetup(t, remote, m1))
	kept := waitConfigMaps(t, []*testenv.Member{m1}, ns, []string{"keep"})
	status.waitApplied(rev1, m1.Name)
	clash := createHandmade(t, m1, ns, "clash")

	// rev2: "fresh" applies, "clash" is refused (conflictResolution Abort).
	co.Write(fleetDir+"/fresh.yaml", e2etest.ConfigMapYAML(ns, "fresh", "new"))
	co.Write(fleetDir+"/clash.yaml", e2etest.ConfigMapYAML(ns, "clash", "from git"))
	rev2 := co.CommitPush("two more ConfigMaps, one clashing")
	eventually(t, converge, func() (bool, string) {
		st, err := status.get(m1.Name)
		if err != nil {
			return false, err.Error()
		}
		applied := e2etest.Condition(st, "Applied")
		ok := applied != nil && applied.Status == "False" && strings.Contains(applied.Message, "clash")
		return ok, fmt.Sprintf("want Applied=False naming the clash for %s; %s", e2etest.Short(rev2), e2etest.DescribeStatus(st))
	})
	waitConfigMaps(t, []*testenv.Member{m1}, ns, []string{"keep", "fresh"})
	clash.check(t, "after the clashing commit")

	// rev3 reverts rev2.
	co.Remove(fleetDir + "/fresh.yaml")
	co.Remove(fleetDir + "/clash.yaml")
	rev3 := co.CommitPush("revert")
	ctrl.waitRevision(rev3)
	after := waitConfigMaps(t, []*testenv.Member{m1}, ns, []string{"keep"})
	checkSameUIDs(t, "after the revert", kept, after, []string{"keep"})
	clash.check(t, "after the revert")
	status.waitApplied(rev3, m1.Name)
}

package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/testenv"
)

// bulkObjects is how many ConfigMaps the big commit adds.
const bulkObjects = 100

// TestPushControllerRestart stops the controller while it applies a commit
// of 100 ConfigMaps, then starts a new one over the same caches and
// stores: it converges, nothing that stays in Git was deleted (UIDs are
// unchanged), and the inventory still prunes exactly what later leaves Git.
func TestPushControllerRestart(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	ns := randomNamespace("restart")
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	clusters := memberNames(members)
	co.ConfigMapFleet(ns, clusters...)
	var keep []string
	for i := range 5 {
		name := fmt.Sprintf("keep-%d", i)
		keep = append(keep, name)
		co.Write(fmt.Sprintf("%s/keep/%s.yaml", fleetDir, name), e2etest.ConfigMapYAML(ns, name, "kept"))
	}
	rev1 := co.CommitPush("five ConfigMaps")
	s := newSetup(t, remote, members...)
	first := startController(t, s)
	kept := waitConfigMaps(t, members, ns, keep)
	status.waitApplied(rev1, clusters...)

	bulk, rev2 := interruptBulkApply(t, members, co, ns, first)

	restarted := time.Now()
	second := startController(t, s)
	all := waitConfigMaps(t, members, ns, append(slices.Clone(keep), bulk...))
	t.Logf("timing: restarted controller converged on %d objects per member in %s", len(keep)+len(bulk), time.Since(restarted).Round(time.Millisecond))
	status.waitApplied(rev2, clusters...)
	checkSameUIDs(t, "after the restart", kept, all, keep)

	// The inventory survived: dropping half the bulk from Git prunes
	// exactly those objects.
	for _, name := range bulk[:bulkObjects/2] {
		co.Remove(fmt.Sprintf("%s/bulk/%s.yaml", fleetDir, name))
	}
	rev3, pushed := co.CommitPush("50 ConfigMaps fewer"), time.Now()
	remaining := append(slices.Clone(keep), bulk[bulkObjects/2:]...)
	after := waitConfigMaps(t, members, ns, remaining)
	t.Logf("timing: %d ConfigMaps pruned from each member %s after the push", bulkObjects/2, time.Since(pushed).Round(time.Millisecond))
	status.waitApplied(rev3, clusters...)
	checkSameUIDs(t, "after the prune", all, after, remaining)
	if st := second.State(); st.Revision != rev3 || st.SourceError != "" {
		t.Errorf("controller state %+v, want %s in force and no error", st, e2etest.Short(rev3))
	}
}

// TestPushControllerRestartAfterRevert stops the controller while it
// applies 100 new ConfigMaps, reverts that commit, and starts a new
// controller: what the interrupted apply created must be pruned, since Git
// no longer has it, and nothing that stays may be deleted.
func TestPushControllerRestartAfterRevert(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	ns := randomNamespace("revert")
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	clusters := memberNames(members)
	co.ConfigMapFleet(ns, clusters...)
	co.Write(fleetDir+"/keep.yaml", e2etest.ConfigMapYAML(ns, "keep", "kept"))
	rev1 := co.CommitPush("one ConfigMap")
	s := newSetup(t, remote, members...)
	first := startController(t, s)
	kept := waitConfigMaps(t, members, ns, []string{"keep"})
	status.waitApplied(rev1, clusters...)

	interruptBulkApply(t, members, co, ns, first)
	co.Remove(fleetDir + "/bulk")
	// The revert deletes 100 of the 102 objects each member holds: the
	// prune guard holds such a revision unless its commit acknowledges it.
	rev3 := co.CommitPush("revert: no bulk ConfigMaps\n\n" + guard.AllowTrailer + ": true\n")

	second := startController(t, s)
	second.waitRevision(rev3)
	after := waitConfigMaps(t, members, ns, []string{"keep"})
	checkSameUIDs(t, "after the restart", kept, after, []string{"keep"})
	status.waitApplied(rev3, clusters...)
}

// interruptBulkApply commits and pushes bulkObjects ConfigMaps, stops the
// controller as soon as the first of them shows up on a member, and
// returns their names and the commit.
func interruptBulkApply(t *testing.T, members []*testenv.Member, co *e2etest.Checkout, ns string, ctrl *running) ([]string, string) {
	t.Helper()
	var bulk []string
	for i := range bulkObjects {
		name := fmt.Sprintf("bulk-%03d", i)
		bulk = append(bulk, name)
		co.Write(fmt.Sprintf("%s/bulk/%s.yaml", fleetDir, name), e2etest.ConfigMapYAML(ns, name, strings.Repeat("x", 512)))
	}
	rev, pushed := co.CommitPush(fmt.Sprintf("%d more ConfigMaps", bulkObjects)), time.Now()
	var seenOn string
	eventuallyEvery(t, converge, 10*time.Millisecond, func() (bool, string) {
		for _, m := range members {
			cms, err := managedConfigMaps(m, ns)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", m.Name, err)
			}
			if n := countPrefix(cms, "bulk-"); n > 0 {
				seenOn = fmt.Sprintf("%s had %d", m.Name, n)
				return true, ""
			}
		}
		return false, "no bulk ConfigMap on any member yet"
	})
	stopAt := time.Since(pushed)
	ctrl.stop()
	var left []string
	for _, m := range members {
		cms, err := managedConfigMaps(m, ns)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		left = append(left, fmt.Sprintf("%s %d/%d", m.Name, countPrefix(cms, "bulk-"), bulkObjects))
	}
	t.Logf("controller stopped %s after the push (when %s bulk ConfigMaps); left behind: %s",
		stopAt.Round(time.Millisecond), seenOn, strings.Join(left, ", "))
	return bulk, rev
}

func memberNames(members []*testenv.Member) []string {
	var out []string
	for _, m := range members {
		out = append(out, m.Name)
	}
	return out
}

func countPrefix(names map[string]types.UID, prefix string) int {
	n := 0
	for name := range names {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

// waitConfigMaps waits until every member holds exactly the managed
// ConfigMaps want in ns, and returns their UIDs by member.
func waitConfigMaps(t *testing.T, members []*testenv.Member, ns string, want []string) map[string]map[string]types.UID {
	t.Helper()
	out := map[string]map[string]types.UID{}
	wantSorted := slices.Sorted(slices.Values(want))
	eventually(t, converge, func() (bool, string) {
		for _, m := range members {
			cms, err := managedConfigMaps(m, ns)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", m.Name, err)
			}
			got := slices.Sorted(maps.Keys(cms))
			if !slices.Equal(got, wantSorted) {
				return false, fmt.Sprintf("%s: %d managed ConfigMaps, want %d; missing %v, extra %v",
					m.Name, len(got), len(wantSorted), minus(wantSorted, got), minus(got, wantSorted))
			}
			out[m.Name] = cms
		}
		return true, ""
	})
	return out
}

// minus returns the names of a that are not in b, at most 5.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
		if len(out) == 5 {
			break
		}
	}
	return out
}

// checkSameUIDs fails the test when any of names has a different UID in
// after than in before on some member: it was deleted and recreated.
func checkSameUIDs(t *testing.T, when string, before, after map[string]map[string]types.UID, names []string) {
	t.Helper()
	for member, uids := range before {
		for _, name := range names {
			if b, ok := uids[name]; ok && after[member][name] != b {
				t.Errorf("%s: %s: ConfigMap %s was deleted and recreated (uid %s, was %s)", when, member, name, after[member][name], b)
			}
		}
	}
}

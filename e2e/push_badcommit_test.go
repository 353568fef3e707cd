package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// brokenFile is a file added by a bad commit; brokenYAML is not YAML
// (metadata.namespace is indented under name). brokenLine is where the
// parser trips.
const (
	brokenFile = "apps/nginx/configmap.yaml"
	brokenYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: nginx-conf
   namespace: demo
data:
  index: hello
`
	fixedYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: nginx-conf
  namespace: demo
data:
  index: hello
`
)

// TestPushBadCommitKeepsLastGood pushes a commit with broken YAML, then one
// with an invalid policy, each also deleting the Service and scaling nginx:
// the previous revision stays applied (nothing pruned, nothing scaled), the
// error names file:line in the controller state and its logs; a fixed
// commit then converges.
func TestPushBadCommitKeepsLastGood(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	m1, m2 := env.Members[0], env.Members[1]
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.CopyDir(quickstartDir, fleetDir)
	rev1 := co.CommitPush("quickstart")
	ctrl := startController(t, newSetup(t, remote, env.Members...))
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, qsNamespace, qsApp, 2) },
		func() (bool, string) { return replicasIs(m2, qsNamespace, qsApp, 3) },
		serviceExists(m1, true), serviceExists(m2, true)))
	status.waitApplied(rev1, m1.Name, m2.Name)
	before := snapshotQuickstart(t, env.Members)

	// Broken YAML, in a commit that would also prune the Service and scale
	// nginx if it were applied.
	co.Remove(qsService)
	co.Edit(qsDeploy, "replicas: 2", "replicas: 4")
	co.Write(fleetDir+"/"+brokenFile, brokenYAML)
	rev2 := co.CommitPush("nginx: config (broken YAML)")
	where := regexp.MustCompile(regexp.QuoteMeta(brokenFile) + `:\d+`)
	msg := waitSourceError(t, ctrl, rev1, rev2, where)
	t.Logf("broken YAML reported as: %s", msg)
	checkKeptLastGood(t, ctrl, status, env, before, rev1, where.FindString(msg))

	// Valid YAML now, but an invalid policy.
	co.Write(fleetDir+"/"+brokenFile, fixedYAML)
	co.Edit(qsPolicy, "replicaSchedulingType: Duplicated", "replicaSchedulingType: Sideways")
	rev3 := co.CommitPush("nginx: invalid replicaSchedulingType")
	policyAt := strings.TrimPrefix(qsPolicy, fleetDir+"/") + fmt.Sprintf(":%d", lineOf(t, co.Read(qsPolicy), "Sideways"))
	msg = waitSourceError(t, ctrl, rev1, rev3, regexp.MustCompile(regexp.QuoteMeta(policyAt)))
	t.Logf("invalid policy reported as: %s", msg)
	checkKeptLastGood(t, ctrl, status, env, before, rev1, policyAt)

	// The fix converges: the Service deletion and the scaling of the bad
	// commits land with it.
	co.Edit(qsPolicy, "replicaSchedulingType: Sideways", "replicaSchedulingType: Duplicated")
	rev4 := co.CommitPush("nginx: fix replicaSchedulingType")
	ctrl.waitRevision(rev4)
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, qsNamespace, qsApp, 4) },
		func() (bool, string) { return replicasIs(m2, qsNamespace, qsApp, 3) },
		serviceExists(m1, false), serviceExists(m2, false)))
	status.waitApplied(rev4, m1.Name, m2.Name)
	for _, m := range env.Members {
		d, err := getDeployment(m, qsNamespace, qsApp)
		if err != nil || d == nil {
			t.Fatalf("%s: Deployment: %v", m.Name, err)
		}
		if string(d.UID) != before[m.Name].deployUID {
			t.Errorf("%s: Deployment was recreated by the fix", m.Name)
		}
	}
}

// quickstartState is what a bad commit must not change on one member.
type quickstartState struct {
	deployUID, serviceUID string
	generation            int64
	replicas              int32
}

func snapshotQuickstart(t *testing.T, members []*testenv.Member) map[string]quickstartState {
	t.Helper()
	out := map[string]quickstartState{}
	for _, m := range members {
		d, err := getDeployment(m, qsNamespace, qsApp)
		if err != nil || d == nil {
			t.Fatalf("%s: Deployment: %v", m.Name, err)
		}
		s, err := getService(m, qsNamespace, qsApp)
		if err != nil || s == nil {
			t.Fatalf("%s: Service: %v", m.Name, err)
		}
		out[m.Name] = quickstartState{deployUID: string(d.UID), serviceUID: string(s.UID), generation: d.Generation, replicas: *d.Spec.Replicas}
	}
	return out
}

// waitSourceError waits until the controller has fetched rev, failed to
// load it with an error matching where, and kept good in force; it returns
// the error.
func waitSourceError(t *testing.T, ctrl *running, good, rev string, where *regexp.Regexp) string {
	t.Helper()
	var msg string
	took := eventually(t, converge, func() (bool, string) {
		st := ctrl.State()
		msg = st.SourceError
		return st.Fetched == rev && st.Revision == good && where.MatchString(st.SourceError),
			fmt.Sprintf("want fetched %s, revision %s and an error matching %q; state %+v", e2etest.Short(rev), e2etest.Short(good), where, st)
	})
	t.Logf("timing: bad revision %s reported %s after the push", e2etest.Short(rev), took.Round(1e6))
	return msg
}

// checkKeptLastGood lets two more reconcile passes run, then checks that
// nothing changed on the members, that the status still says good, and
// that the logs name the problem (where).
func checkKeptLastGood(t *testing.T, ctrl *running, status *statusReader, env *testenv.Env, before map[string]quickstartState, good, where string) {
	t.Helper()
	ctrl.waitPasses(2)
	if got := snapshotQuickstart(t, env.Members); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("members changed while a bad revision was the tip:\n got  %+v\n want %+v", got, before)
	}
	for _, m := range env.Members {
		st, err := status.get(m.Name)
		if err != nil {
			t.Fatalf("%s: failed to read status: %v", m.Name, err)
		}
		if st.AppliedRevision != good {
			t.Errorf("%s: status says %s applied, want the last good %s", m.Name, e2etest.Short(st.AppliedRevision), e2etest.Short(good))
		}
	}
	if st := ctrl.State(); st.Revision != good {
		t.Errorf("controller state %+v, want the last good revision %s in force", st, e2etest.Short(good))
	}
	if _, ok := ctrl.logs.find(where); !ok {
		t.Errorf("the controller logged nothing naming %s; its log:\n%s", where, strings.Join(ctrl.logs.all(), "\n"))
	}
}

// lineOf returns the 1-based line of content holding sub.
func lineOf(t *testing.T, content, sub string) int {
	t.Helper()
	for i, l := range strings.Split(content, "\n") {
		if strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("%q not found", sub)
	return 0
}

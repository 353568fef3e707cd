package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// TestSupplyChainSignedCommits runs the controller with --verify-commits
// against a real member and a Git remote over smart HTTP, with three keys
// generated here: an SSH key and an OpenPGP key both trusted (a rotation
// in progress), and an SSH key that is not. Commits signed by a trusted
// key are applied; an unsigned commit and one signed by the untrusted key
// are not: the member keeps the last verified revision, and the
// controller's state, its log, a Warning Event (recorded by a fake
// EventRecorder) and the member's status (what `propagit status -o wide`
// prints) name the commit and the reason. Then, in "all" mode from the last verified revision, a signed
// merge bringing in an unsigned commit is refused, naming that commit.
func TestSupplyChainSignedCommits(t *testing.T) {
	t.Parallel()
	m := testenv.Start(t, testenv.Options{Members: 1}).Members[0]
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	ns := randomNamespace("signed")
	sshKey := verifytest.SSHKey(t, "release@example.com")
	pgpKey := verifytest.PGPKey(t, "Release 2026", "release@example.com", nil)
	stranger := verifytest.SSHKey(t, "mallory@example.com")
	trusted := verifytest.TrustedKeys(t, sshKey, pgpKey)

	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m.Name)
	co.Write(fleetDir+"/cm.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	co.Signer = sshKey.Signer
	rev1 := co.CommitPush("v1, signed over SSH")

	v := &controller.SourceVerification{Mode: verify.ModeTip, TrustedKeys: trusted, Limits: verify.DefaultLimits()}
	s := newSetup(t, remote, m)
	events := &eventLog{}
	opts := controllerOptions()
	opts.Events = events
	ctrl := startVerifiedController(t, s, opts, v)
	ctrl.waitRevision(rev1)
	eventually(t, converge, configMapValueIs(m, ns, "app", "v1"))
	status.waitApplied(rev1, m.Name)

	for i, tc := range []struct {
		name   string
		signer git.Signer
		reason string
	}{
		{"unsigned", nil, "not signed"},
		{"signed by a key that is not trusted", stranger.Signer, "is not in the trusted keys"},
	} {
		co.Write(fleetDir+"/cm.yaml", e2etest.ConfigMapYAML(ns, "app", fmt.Sprint("forged-", i)))
		co.Signer = tc.signer
		bad := co.CommitPush(tc.name)
		msg := waitRefused(t, ctrl, rev1, bad, tc.reason)
		t.Logf("%s: %s", tc.name, msg)
		checkKeptVerified(t, ctrl, status, remote.URL, m, ns, rev1, bad, tc.reason)
		if !events.has(m.Name, controller.EventVerificationFailed, short7(bad)) {
			t.Errorf("%s: no Warning Event names %s; events: %v", tc.name, short7(bad), events.all())
		}
		if _, ok := ctrl.logs.find(short7(bad)); !ok {
			t.Errorf("%s: the controller logged nothing naming %s", tc.name, short7(bad))
		}
	}

	// Signed by the other trusted key (OpenPGP): applied, with what the
	// refused commits carried.
	co.Write(fleetDir+"/cm.yaml", e2etest.ConfigMapYAML(ns, "app", "v4"))
	co.Signer = pgpKey.Signer
	rev4 := co.CommitPush("v4, signed with OpenPGP")
	ctrl.waitRevision(rev4)
	eventually(t, converge, configMapValueIs(m, ns, "app", "v4"))
	status.waitApplied(rev4, m.Name)
	if st := ctrl.State(); st.SourceError != "" {
		t.Errorf("after a verified revision the controller still reports %q", st.SourceError)
	}
	ctrl.stop()

	// "all" from rev4 (--verify-commits-since): a merge signed by a
	// trusted key that brings in an unsigned commit is refused.
	co.Signer = nil
	co.Write(fleetDir+"/side.yaml", e2etest.ConfigMapYAML(ns, "side", "unsigned"))
	unsigned := co.Commit("an unsigned commit on a side branch")
	resetTo(t, co, rev4)
	co.Write(fleetDir+"/cm.yaml", e2etest.ConfigMapYAML(ns, "app", "v5"))
	co.Signer = sshKey.Signer
	signed := co.Commit("v5, signed")
	co.Write(fleetDir+"/side.yaml", e2etest.ConfigMapYAML(ns, "side", "unsigned"))
	co.Parents = []plumbing.Hash{plumbing.NewHash(signed), plumbing.NewHash(unsigned)}
	merge := co.Commit("merge the side branch, signed")
	all := &controller.SourceVerification{Mode: verify.ModeAll, TrustedKeys: trusted, Since: rev4, Limits: verify.DefaultLimits()}
	ctrl = startVerifiedController(t, s, controllerOptions(), all)
	ctrl.waitRevision(rev4) // nothing to verify from rev4 to rev4
	co.Push("")
	msg := waitRefused(t, ctrl, rev4, merge, short7(unsigned)+": not signed")
	t.Logf("all mode: %s", msg)
	checkKeptVerified(t, ctrl, status, remote.URL, m, ns, rev4, merge, short7(unsigned)+": not signed")
	if cm, err := getConfigMap(m, ns, "side"); err != nil || cm != nil {
		t.Errorf("the unsigned commit's ConfigMap reached the member: %v, %v", cm, err)
	}
}

// startVerifiedController is startControllerOpts whose fetcher verifies
// commit signatures (controller --verify-commits).
func startVerifiedController(t *testing.T, s setup, opts controller.Options, v *controller.SourceVerification) *running {
	t.Helper()
	follower := source.NewFollower(source.FollowOptions{URL: s.URL, Branch: branch, Path: fleetDir, Auth: s.Auth, CacheDir: s.SourceCache})
	store, err := gitstore.New(gitstore.Options{URL: s.URL, Auth: s.Auth, CacheDir: s.WorksCache})
	if err != nil {
		t.Fatal(err)
	}
	creds := &cluster.Credentials{KubeconfigDir: s.KubeconfigDir, QPS: 100, Burst: 200}
	logs := newLogRecorder(t)
	fetcher := &countingFetcher{inner: controller.VerifiedGitFetcher(follower, v)}
	c := controller.New(opts, fetcher, store, store, creds, logs.logger())
	r := &running{Controller: c, t: t, fetcher: fetcher, logs: logs}
	r.loop = e2etest.StartLoop(t, "controller", e2etest.StopTimeout, c.Run)
	t.Cleanup(r.stop)
	return r
}

// waitRefused waits until the controller has fetched rev, refused it with
// an error saying reason, and kept good in force ("" for any); it returns
// the error.
func waitRefused(t *testing.T, ctrl *running, good, rev, reason string) string {
	t.Helper()
	var msg string
	took := eventually(t, converge, func() (bool, string) {
		st := ctrl.State()
		msg = st.SourceError
		ok := st.Fetched == rev && strings.Contains(msg, short7(rev)) && strings.Contains(msg, reason) &&
			(good == "" || st.Revision == good)
		return ok, fmt.Sprintf("want %s refused (%q), %s in force; state %+v", short7(rev), reason, short7(good), st)
	})
	t.Logf("timing: %s refused %s after the push", short7(rev), took.Round(1e6))
	return msg
}

// checkKeptVerified lets two more passes run, then checks that the member
// still runs good's content and that its status names the refused commit
// and the reason, as `propagit status -o wide` prints it.
func checkKeptVerified(t *testing.T, ctrl *running, status *statusReader, url string, m *testenv.Member, ns, good, refused, reason string) {
	t.Helper()
	ctrl.waitPasses(2)
	if cm, err := getConfigMap(m, ns, "app"); err != nil || cm == nil || strings.HasPrefix(cm.Data["value"], "forged") {
		t.Errorf("the member runs a refused revision: %v, %v", cm, err)
	}
	eventually(t, converge, func() (bool, string) {
		st, err := status.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		ok := st.AppliedRevision == good && strings.Contains(st.Message, short7(refused)) && strings.Contains(st.Message, reason)
		return ok, fmt.Sprintf("want %s applied and a message naming %s (%q); %s", short7(good), short7(refused), reason, e2etest.DescribeStatus(st))
	})
	out := runCLI(t, converge, "status", "--repo", url, "-o", "wide")
	if !strings.Contains(out.stdout, short7(refused)) || !strings.Contains(out.stdout, reason) {
		t.Errorf("propagit status does not name %s and %q:\n%s", short7(refused), reason, out)
	}
}

// resetTo moves the checkout's branch to rev, files included.
func resetTo(t *testing.T, co *e2etest.Checkout, rev string) {
	t.Helper()
	wt, err := co.Repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: plumbing.NewHash(rev), Mode: git.HardReset}); err != nil {
		t.Fatal(err)
	}
}

// eventLog records the Events the controller emits.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) Event(cluster, eventType, reason, message string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, strings.Join([]string{cluster, eventType, reason, message}, " "))
}

func (e *eventLog) has(cluster, reason, text string) bool {
	for _, ev := range e.all() {
		if strings.HasPrefix(ev, cluster+" Warning "+reason+" ") && strings.Contains(ev, text) {
			return true
		}
	}
	return false
}

func (e *eventLog) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

// configMapValueIs holds when ConfigMap ns/name has data.value v.
func configMapValueIs(m *testenv.Member, ns, name, v string) func() (bool, string) {
	return func() (bool, string) {
		cm, err := getConfigMap(m, ns, name)
		switch {
		case err != nil:
			return false, err.Error()
		case cm == nil:
			return false, fmt.Sprintf("%s: ConfigMap %s/%s does not exist", m.Name, ns, name)
		}
		return cm.Data["value"] == v, fmt.Sprintf("%s: ConfigMap %s/%s value %q, want %q", m.Name, ns, name, cm.Data["value"], v)
	}
}

// short7 shortens a commit hash as propagit's messages do.
func short7(rev string) string { return workv1alpha1.ShortRevision(rev) }

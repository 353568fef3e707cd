package pull

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cli"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/memberstore"
)

// Signed Works (issue 31): the controller signs every commit it writes to
// the works branch (--works-signing-key), and an agent given its public key
// (--works-trusted-keys) applies only a Work whose commit the controller
// signed. A Work forged by anyone else who can push to the works
// repository is refused: the member keeps what it runs, and the agent
// reports it in its status (which `propagit status` shows) and in
// propagit_works_refused_total. The controller's next pass writes its own
// signed Works over a forged tip.
//
// The controller is stopped while a forgery is on the branch, so that
// the forged commit stays the tip for as long as the test looks at it:
// running, the controller would replace it on its next pass.

// forgeWork clones the works branch of url with auth, as anyone holding
// a push credential could, and pushes a commit on it that sets ConfigMap
// app of cluster's Work to value and plants a ConfigMap, planted, beside
// it, signed by signer (nil: unsigned). It returns the commit.
func forgeWork(t *testing.T, url string, auth transport.AuthMethod, cluster, value string, signer git.Signer) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	branch := plumbing.NewBranchReferenceName(gitstore.DefaultOptions().Branch)
	dir := t.TempDir()
	repo, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: url, Auth: auth, ReferenceName: branch, SingleBranch: true})
	if err != nil {
		t.Fatalf("forger: failed to clone the works branch: %v", err)
	}
	var app string
	err = filepath.WalkDir(filepath.Join(dir, cluster), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), "kind: ConfigMap\n") && strings.Contains(string(data), "\n  name: app\n") {
			app = p
		}
		return err
	})
	if err != nil || app == "" {
		t.Fatalf("forger: no ConfigMap app in the Work of %s: %v", cluster, err)
	}
	data, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	valueLine := regexp.MustCompile(`(?m)^  value: .*$`)
	if !valueLine.Match(data) {
		t.Fatalf("forger: %s holds no data value:\n%s", app, data)
	}
	forged := valueLine.ReplaceAllString(string(data), "  value: "+value)
	planted := strings.Replace(forged, "\n  name: app\n", "\n  name: planted\n", 1)
	if err := os.WriteFile(app, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(app), "configmap_planted.yaml"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	who := &object.Signature{Name: "propagit", Email: "propagit@localhost", When: time.Now()}
	h, err := wt.Commit("propagit: render", &git.CommitOptions{Author: who, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	spec := config.RefSpec(branch + ":" + branch)
	if err := repo.PushContext(ctx, &git.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{spec}}); err != nil {
		t.Fatalf("forger: failed to push: %v", err)
	}
	return h.String()
}

// verifyingAgent is an agent whose git store verifies the Works' commits
// against the controller's public key, with metrics of its own.
type verifyingAgent struct {
	polls *countingSource
	reg   *prometheus.Registry
}

// startVerifyingAgent runs m's agent on the works repository at url
// (auth), applying only Works whose commit a key of keys (a trusted-keys
// file) signed.
func startVerifyingAgent(t *testing.T, m *testenv.Member, url string, auth transport.AuthMethod, keys string) *verifyingAgent {
	t.Helper()
	store := newGitStore(t, gitstore.Options{URL: url, Auth: auth,
		WorkVerifier: &verify.TipVerifier{Keys: keys, Limits: verify.DefaultLimits()}})
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := agentOptions(m.Name)
	opts.Deliver.Metrics = rec
	polls := &countingSource{Source: store}
	startLoop(t, "agent "+m.Name, newAgent(t, opts, polls, store, m.Config).Run)
	return &verifyingAgent{polls: polls, reg: reg}
}

// refused returns the agent's propagit_works_refused_total{reason}.
func (a *verifyingAgent) refused(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := a.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "propagit_works_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// checkKept lets the agent poll three more times, then checks that m
// still runs ConfigMap app with value and no ConfigMap planted.
func (a *verifyingAgent) checkKept(t *testing.T, m *testenv.Member, ns, value string) {
	t.Helper()
	a.polls.waitPolls(t, 3)
	for _, cond := range []func() (bool, string){configMapValue(m, ns, "app", value), absent(m, ns, "planted")} {
		if ok, msg := cond(); !ok {
			t.Errorf("the member does not keep what it ran: %s", msg)
		}
	}
}

// waitRefused waits until cluster's status in store says the Work of
// commit is refused, with text (the reason), applied still in force, and
// returns the message.
func waitRefused(t *testing.T, store works.StatusStore, cluster, commit, text, applied string) string {
	t.Helper()
	short := workv1alpha1.ShortRevision(commit)
	st := waitStatus(t, store, cluster, fmt.Sprintf("the Work of %s refused (%q), %s kept", short, text, e2etest.Short(applied)),
		func(st *workv1alpha1.WorkStatus) bool {
			return st.AppliedRevision == applied && strings.Contains(st.Message, "refused the Works at commit "+short) &&
				strings.Contains(st.Message, text) && e2etest.IsReady(st)
		})
	return st.Message
}

// notRefused is a waitStatus condition: rev applied and Ready, no refusal
// in the message.
func notRefused(rev string) func(*workv1alpha1.WorkStatus) bool {
	return func(st *workv1alpha1.WorkStatus) bool {
		return appliedReady(rev)(st) && !strings.Contains(st.Message, "refused")
	}
}

// statusWide runs `propagit status --repo url -o wide` in-process and
// returns what it printed.
func statusWide(t *testing.T, url string) string {
	t.Helper()
	var out bytes.Buffer
	root := cli.NewRootCommand(&out, &out)
	root.SetArgs([]string{"status", "--repo", url, "-o", "wide"})
	ctx, cancel := kubeCtx()
	defer cancel()
	var exit *cli.ExitError
	if err := root.ExecuteContext(ctx); err != nil && !errors.As(err, &exit) {
		t.Fatalf("propagit status: %v\n%s", err, out.String())
	}
	return out.String()
}

// TestSupplyChainPullRefusesForgedWork: a real pull member's agent, given
// the controller's public key, applies the controller's signed Works from
// the works branch over smart HTTP. A Work forged on that branch by a push
// that is not the controller's — unsigned, then signed by a key the agent
// does not trust — reads as a valid Work without verification (it changes
// ConfigMap app and plants another), yet is refused: the member keeps
// ConfigMap app at v1 and never gets the planted one, over several polls;
// the status names the commit and the reason (as `propagit status -o wide`
// prints it); propagit_works_refused_total counts each forged commit once
// by reason. The controller's next pass writes its signed Works over the
// forged tip, which the agent accepts — after a restart, and while it runs
// (a third forgery) — and a new revision then applies.
func TestSupplyChainPullRefusesForgedWork(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	r := e2etest.HTTPRemote(t)
	ns := randomName("forged")
	controllerKey := verifytest.SSHKey(t, "propagit-controller")
	mallory := verifytest.SSHKey(t, "mallory@example.com")
	keys := verifytest.TrustedKeys(t, controllerKey)
	f := newFleet(t, r.URL)
	f.write("clusters/"+m.Name+".yaml", e2etest.ClusterYAML(m.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", policyYAML(ns, m.Name))
	f.write("app.yaml", configMapYAML(ns, "app", "v1"))
	rev1 := f.CommitPush("app on a pull member")

	hub := func() *runningController {
		store := newGitStore(t, gitstore.Options{URL: r.URL, Signer: controllerKey.Signer})
		return startController(t, hubSetup{SourceURL: r.URL, Works: store, Status: store, Options: controllerOptions()})
	}
	c := hub()
	agent := startVerifyingAgent(t, m, r.URL, nil, keys)
	// reader reads the Works and the status without verifying anything.
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
	c.waitRevision(t, rev1)
	eventually(t, converge, configMapValue(m, ns, "app", "v1"))
	waitStatus(t, reader, m.Name, "rev1 applied and Ready", notRefused(rev1))

	c.Stop()
	for i, tc := range []struct {
		name   string
		signer git.Signer
		reason string
		text   string
	}{
		{"unsigned", nil, verify.ReasonUnsigned, ": not signed"},
		{"signed by a key the agent does not trust", mallory.Signer, verify.ReasonUntrusted, "is not in the trusted keys"},
	} {
		forged := forgeWork(t, r.URL, nil, m.Name, fmt.Sprint("forged-", i), tc.signer)
		if ok, msg := workHolds(reader, m.Name, "ConfigMap/app", "ConfigMap/planted")(); !ok {
			t.Fatalf("%s: the forged Work does not read as one: %s", tc.name, msg)
		}
		msg := waitRefused(t, reader, m.Name, forged, tc.text, rev1)
		t.Logf("%s: %s", tc.name, msg)
		agent.checkKept(t, m, ns, "v1")
		if got := agent.refused(t, tc.reason); got != 1 {
			t.Errorf("%s: propagit_works_refused_total{reason=%q} = %v, want 1", tc.name, tc.reason, got)
		}
		out := statusWide(t, r.URL)
		if short := workv1alpha1.ShortRevision(forged); !strings.Contains(out, short) || !strings.Contains(out, tc.text) {
			t.Errorf("%s: propagit status does not name %s and %q:\n%s", tc.name, short, tc.text, out)
		}
	}
	if got := agent.refused(t, verify.ReasonUnsigned); got != 1 {
		t.Errorf("propagit_works_refused_total{reason=%q} = %v at the end, want 1: one per forged commit, not per poll", verify.ReasonUnsigned, got)
	}

	c = hub()
	eventually(t, converge, workHolds(reader, m.Name, "ConfigMap/app"))
	waitStatus(t, reader, m.Name, "rev1 applied, the controller's Works accepted again", notRefused(rev1))
	// Running, the controller writes its Works over a forged tip on its
	// next pass (every second here), whether the agent saw it or not.
	forgeWork(t, r.URL, nil, m.Name, "forged-again", nil)
	eventually(t, converge, workHolds(reader, m.Name, "ConfigMap/app"))
	waitStatus(t, reader, m.Name, "rev1 applied, the controller's Works accepted again", notRefused(rev1))
	agent.checkKept(t, m, ns, "v1")
	f.write("app.yaml", configMapYAML(ns, "app", "v2"))
	rev2 := f.CommitPush("v2")
	c.waitRevision(t, rev2)
	eventually(t, converge, all(configMapValue(m, ns, "app", "v2"), absent(m, ns, "planted")))
	waitStatus(t, reader, m.Name, "rev2 applied and Ready", notRefused(rev2))
}

// TestSupplyChainPullForgedWorkMemberRepos: with one works repository per
// member (--works-repo holding {cluster}) on a smart-HTTP server where
// each agent's account reaches only its own repository, the push
// credential an agent holds for its status is one more that can write its
// Works: B's account pushes a forged Work into B's works repository. B's
// agent refuses it, keeps what B runs and reports it (status, metric); A
// is untouched; the controller's next revision applies on both.
func TestSupplyChainPullForgedWorkMemberRepos(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 2})
	a, b := env.Members[0], env.Members[1]
	ns := randomName("forged")
	repos := startMemberRepos(t, a, b, ns, policyYAML(ns, a.Name, b.Name))
	admin, authA, authB, f, rev1 := repos.admin, repos.authA, repos.authB, repos.fleet, repos.rev1
	urlA, urlB := repos.worksURL(a), repos.worksURL(b)
	controllerKey := verifytest.SSHKey(t, "propagit-controller")
	keys := verifytest.TrustedKeys(t, controllerKey)

	hub := func() *runningController {
		store, err := memberstore.New(repos.worksTemplate, gitstore.Options{Auth: admin, Signer: controllerKey.Signer}, testLogger(t, "works"))
		if err != nil {
			t.Fatal(err)
		}
		return startController(t, hubSetup{SourceURL: repos.sourceURL, Auth: admin, Works: store, Status: store, Options: controllerOptions()})
	}
	c := hub()
	agentA := startVerifyingAgent(t, a, urlA, authA, keys)
	agentB := startVerifyingAgent(t, b, urlB, authB, keys)
	readerA := newGitStore(t, gitstore.Options{URL: urlA, Auth: admin})
	readerB := newGitStore(t, gitstore.Options{URL: urlB, Auth: admin})
	c.waitRevision(t, rev1)
	for _, m := range []struct {
		member *testenv.Member
		reader *gitstore.Store
	}{{a, readerA}, {b, readerB}} {
		eventually(t, converge, configMapValue(m.member, ns, "app", "v1"))
		waitStatus(t, m.reader, m.member.Name, "rev1 applied and Ready", notRefused(rev1))
	}

	c.Stop()
	forged := forgeWork(t, urlB, authB, b.Name, "forged", nil)
	if ok, msg := workHolds(readerB, b.Name, "ConfigMap/app", "ConfigMap/planted")(); !ok {
		t.Fatalf("the forged Work does not read as one: %s", msg)
	}
	msg := waitRefused(t, readerB, b.Name, forged, ": not signed", rev1)
	t.Logf("B: %s", msg)
	agentB.checkKept(t, b, ns, "v1")
	if got := agentB.refused(t, verify.ReasonUnsigned); got != 1 {
		t.Errorf("B: propagit_works_refused_total{reason=%q} = %v, want 1", verify.ReasonUnsigned, got)
	}
	agentA.checkKept(t, a, ns, "v1")
	if got := agentA.refused(t, verify.ReasonUnsigned); got != 0 {
		t.Errorf("A refused %v Works, want 0", got)
	}
	ctx, cancel := kubeCtx()
	defer cancel()
	switch st, err := readerA.GetStatus(ctx, a.Name); {
	case err != nil:
		t.Errorf("A's status: %v", err)
	case !notRefused(rev1)(st):
		t.Errorf("A's status after B's forgery: %s; want rev1 applied and Ready, no refusal", e2etest.DescribeStatus(st))
	}

	c = hub()
	f.write("app.yaml", configMapYAML(ns, "app", "v2"))
	rev2 := f.CommitPush("v2")
	c.waitRevision(t, rev2)
	eventually(t, converge, all(configMapValue(a, ns, "app", "v2"), configMapValue(b, ns, "app", "v2"), absent(b, ns, "planted")))
	waitStatus(t, readerB, b.Name, "rev2 applied and Ready", notRefused(rev2))
	waitStatus(t, readerA, a.Name, "rev2 applied and Ready", notRefused(rev2))
}

package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works"
)

// commitSigned writes files into the worktree, commits them signed by key
// (nil: unsigned) and returns the commit's hash.
func (r *fetchRepo) commitSigned(t *testing.T, files map[string]string, key *verifytest.Key) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	opts := &git.CommitOptions{Author: &object.Signature{Name: "dev", Email: "dev@example.com", When: time.Now()}}
	if key != nil {
		opts.Signer = key.Signer
	}
	h, err := r.wt.Commit("c", opts)
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// TestRecorderHeartbeatRecordsARefusedSource: with --verify-commits, a
// pass that finds the newest revision unsigned writes the refusal with the
// recorder heartbeat at once — not 30 seconds later — naming the revision,
// why, and since when, while the Works stay at the last verified revision;
// a controller restarted on the refused tip (nothing verified yet) writes
// it again with the time it was first refused; the next signed revision
// clears it at once. A real Git source, real signatures and the Git works
// store.
func TestRecorderHeartbeatRecordsARefusedSource(t *testing.T) {
	ctx := context.Background()
	f := newGuardFleet(t)
	release := verifytest.SSHKey(t, "release@example.com")
	keys := verifytest.TrustedKeys(t, release)
	repo := newFetchRepo(t)
	fleet := map[string]string{
		"clusters/m1.yaml": "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n",
		"namespace.yaml":   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n",
		"policy.yaml": "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: all\n  namespace: app\n" +
			"spec:\n  resourceSelectors:\n  - apiVersion: v1\n    kind: ConfigMap\n  placement:\n    clusterAffinity:\n      clusterNames: [m1]\n",
	}
	configMap := func(v string) map[string]string {
		fleet["cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: app\ndata:\n  k: " + v + "\n"
		return fleet
	}
	controller := func() *Controller {
		fetch := VerifiedGitFetcher(source.NewFollower(source.FollowOptions{URL: "file://" + filepath.ToSlash(repo.dir), Branch: "main"}),
			&SourceVerification{Mode: verify.ModeTip, TrustedKeys: keys, Limits: verify.DefaultLimits()})
		c := New(DefaultOptions(), fetch, f.store, f.store, nil, logr.Discard())
		c.clock = f.clock
		return c
	}
	state := func() works.RecorderState {
		t.Helper()
		s, err := f.store.RecorderHeartbeat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	newest := func() string {
		t.Helper()
		rev, err := f.store.NewestRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}

	good := repo.commitSigned(t, configMap("v1"), release)
	c := controller()
	t0 := f.clock.Now()
	if err := c.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := state(); !got.At.Equal(t0) || got.Refused() {
		t.Fatalf("a signed revision: state %+v, want a heartbeat at %v and no refusal", got, t0)
	}

	unsigned := repo.commitSigned(t, configMap("v2"), nil)
	f.clock.Step(5 * time.Second)
	_ = c.Reconcile(ctx) // refused: the last verified revision stays in force
	refusedAt := f.clock.Now()
	got := state()
	if !got.At.Equal(refusedAt) || got.RefusedRevision != unsigned || !got.RefusedSince.Equal(refusedAt) ||
		got.RefusedReason != "commit "+unsigned[:7]+": not signed" {
		t.Errorf("an unsigned tip 5s after the last heartbeat: state %+v; want it written at once, refusing %s at %v, \"commit %s: not signed\"",
			got, unsigned[:7], refusedAt, unsigned[:7])
	}
	if rev := newest(); rev != good {
		t.Errorf("the Works moved to %s, want them at the verified %s", rev, good)
	}
	f.clock.Step(10 * time.Second)
	_ = c.Reconcile(ctx)
	if got := state(); !got.At.Equal(refusedAt) || got.RefusedRevision != unsigned {
		t.Errorf("the same refusal 10s later: state %+v, want it unchanged (the heartbeat is written every 30s)", got)
	}

	// A restart on the refused tip: nothing verifies, nothing is rendered,
	// and the refusal keeps the time it was first seen.
	c = controller()
	f.clock.Step(time.Minute)
	restarted := f.clock.Now()
	if err := c.Reconcile(ctx); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Errorf("after a restart on the refused tip: %v, want it refused", err)
	}
	if got := state(); !got.At.Equal(restarted) || got.RefusedRevision != unsigned || !got.RefusedSince.Equal(refusedAt) {
		t.Errorf("after a restart on the refused tip: state %+v, want the heartbeat at %v refusing %s since %v", got, restarted, unsigned[:7], refusedAt)
	}

	fixed := repo.commitSigned(t, configMap("v3"), release)
	f.clock.Step(time.Second)
	if err := c.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := state(); !got.At.Equal(f.clock.Now()) || got.Refused() {
		t.Errorf("a signed tip 1s after the refusal: state %+v, want the refusal cleared at once", got)
	}
	if rev := newest(); rev != fixed {
		t.Errorf("the Works are at %s, want the signed %s", rev, fixed)
	}
}

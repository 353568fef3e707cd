package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/propagit/propagit/internal/verify/verifytest"
)

// signedRepo is a repository on disk whose commits a test signs (or not).
type signedRepo struct {
	t    *testing.T
	dir  string
	wt   *git.Worktree
	n    int
	when time.Time
}

func newSignedRepo(t *testing.T) *signedRepo {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &signedRepo{t: t, dir: dir, wt: wt, when: time.Now().Add(-time.Hour)}
}

// commit commits a new file, signed by key (nil: unsigned).
func (r *signedRepo) commit(key *verifytest.Key) string {
	r.t.Helper()
	r.n++
	r.when = r.when.Add(time.Second)
	name := fmt.Sprintf("f%d.yaml", r.n)
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte("n: 1\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.wt.Add(name); err != nil {
		r.t.Fatal(err)
	}
	opts := &git.CommitOptions{Author: &object.Signature{Name: "dev", Email: "dev@example.com", When: r.when}}
	if key != nil {
		opts.Signer = key.Signer
	}
	h, err := r.wt.Commit(name, opts)
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

// TestSupplyChainVerifyCommand runs propagit verify on a history signed
// by two trusted keys (a rotation: old SSH, new OpenPGP) with one unsigned
// commit: a range before it verifies and names each signer; a range
// across it exits 1 naming it; the tip alone verifies; -o json says the
// same.
func TestSupplyChainVerifyCommand(t *testing.T) {
	old := verifytest.SSHKey(t, "ci-2025@example.com")
	next := verifytest.PGPKey(t, "CI 2026", "ci@example.com", nil)
	keys := verifytest.TrustedKeys(t, old, next)
	r := newSignedRepo(t)
	c1 := r.commit(old)
	c2 := r.commit(next)
	c3 := r.commit(nil)
	c4 := r.commit(next)

	out, _ := runCLI(t, 0, "verify", "--repo", r.dir, "--range", c1+".."+c2, "--trusted-keys", keys)
	if !strings.Contains(out, c2[:7]) || !strings.Contains(out, "CI 2026 <ci@example.com>") || strings.Contains(out, c1[:7]+":") {
		t.Errorf("range %s..%s:\n%s", c1[:7], c2[:7], out)
	}
	out, _ = runCLI(t, 0, "verify", "--repo", r.dir, "--range", "HEAD~3..HEAD~2", "--trusted-keys", keys)
	if !strings.Contains(out, "signed by CI 2026") {
		t.Errorf("range by names:\n%s", out)
	}
	out, stderr := runCLI(t, 1, "verify", "--repo", r.dir, "--range", c1+".."+c4, "--trusted-keys", keys)
	if !strings.Contains(out, "FAIL commit "+c3[:7]+": not signed") || !strings.Contains(out, "3 commits checked") {
		t.Errorf("range %s..%s:\n%s\n%s", c1[:7], c4[:7], out, stderr)
	}
	out, _ = runCLI(t, 0, "verify", "--repo", r.dir, "--trusted-keys", keys)
	if !strings.Contains(out, c4[:7]+": verified (1 commits checked)") {
		t.Errorf("tip:\n%s", out)
	}
	runCLI(t, 1, "verify", "--repo", r.dir, "--mode", "all", "--trusted-keys", keys)
	out, _ = runCLI(t, 1, "verify", "--repo", r.dir, "--range", c1+".."+c4, "--trusted-keys", keys, "-o", "json")
	var rep struct {
		Verified bool
		Commits  []struct{ Commit, Method, Signer, Reason, Message string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Verified || len(rep.Commits) != 3 || rep.Commits[1].Commit != c3 || rep.Commits[1].Reason != "Unsigned" {
		t.Errorf("json: %+v", rep)
	}
	// Only the new key: the old key's commit fails as untrusted.
	onlyNext := verifytest.TrustedKeys(t, next)
	out, _ = runCLI(t, 1, "verify", "--repo", r.dir, "--revision", c1, "--trusted-keys", onlyNext)
	if !strings.Contains(out, "is not in the trusted keys") {
		t.Errorf("old key after rotation:\n%s", out)
	}
}

// TestSupplyChainVerifyFlags: wrong verification flags stop the controller
// and the agent at once with exit code 2, naming the flag.
func TestSupplyChainVerifyFlags(t *testing.T) {
	keys := verifytest.TrustedKeys(t, verifytest.SSHKey(t, "ci"))
	bad := verifytest.WriteFile(t, "keys", []byte(strings.Repeat(verifytest.SSHKey(t, "ci").Public, 300)))
	controller := []string{"controller", "--repo", "file:///nonexistent/fleet.git", "--health-addr", "", "--http-addr", "",
		"--cache-dir", t.TempDir()}
	agent := []string{"agent", "--cluster", "edge-1", "--repo", "file:///nonexistent/fleet.git",
		"--kubeconfig", memberKubeconfig(t), "--cache-dir", t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(controller, "--verify-commits", "tip"), "--trusted-keys"},
		{append(controller, "--verify-commits", "sometimes", "--trusted-keys", keys), "--verify-commits"},
		{append(controller, "--trusted-keys", keys), "--verify-commits"},
		{append(controller, "--verify-commits", "tip", "--trusted-keys", keys, "--verify-commits-since", "abc"), "--verify-commits-since"},
		{append(controller, "--verify-commits", "all", "--trusted-keys", keys, "--verify-commits-since", "abc"), "--verify-commits-since"},
		{append(controller, "--verify-commits", "tip", "--trusted-keys", bad), "300 keys"},
		{append(controller, "--works-signing-key", keys), "private key"},
		{append(agent, "--works-trusted-keys", bad), "300 keys"},
		{append(agent, "--works-trusted-keys", keys, "--works-store", "cr"), "RBAC"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err, took := runCommand(ctx, tc.args...)
		cancel()
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d %v, want exit 2 naming %s", tc.args[len(controller)-2:], exitCode(err), err, tc.want)
		}
		if took > atOnce {
			t.Errorf("%v took %s", tc.args, took)
		}
	}
}

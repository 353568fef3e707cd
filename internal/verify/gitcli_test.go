package verify_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// gitCLI runs git in dir with a clean configuration, failing the test on
// error, and returns its output.
func gitCLI(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestSupplyChainGitCLISSHSignatures proves interop with real git: a
// commit signed by `git commit -S` with gpg.format=ssh verifies here, and
// a commit signed here passes `git verify-commit` with the same
// allowed_signers file.
func TestSupplyChainGitCLISSHSignatures(t *testing.T) {
	for _, tool := range []string{"git", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	key := verifytest.SSHKey(t, "dev@example.com")
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, key.Private, 0o600); err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(allowed, []byte(key.Public), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "repo")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, work, nil, "init", "-q", "-b", "main")
	for _, kv := range [][2]string{{"user.name", "Dev"}, {"user.email", "dev@example.com"}, {"gpg.format", "ssh"},
		{"user.signingkey", keyFile}, {"gpg.ssh.allowedSignersFile", allowed}} {
		gitCLI(t, work, nil, "config", kv[0], kv[1])
	}
	gitCLI(t, work, nil, "commit", "-q", "--allow-empty", "-S", "-m", "signed by git")

	r, err := git.PlainOpen(work)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	v := verifier(t, key)
	rep := v.Revision(r.Storer, head.Hash().String(), "", verify.ModeTip)
	if err := rep.Error(); err != nil {
		t.Fatalf("a commit git signed does not verify: %v", err)
	}
	if got := rep.Results[0]; got.Signer != "dev@example.com" || got.Method != verify.MethodSSH {
		t.Errorf("verdict %s, want signed by dev@example.com over SSH", got)
	}
	t.Logf("git's commit: %s", rep.Results[0])

	// The other way round: go-git with our Signer, checked by git.
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("signed by propagit", &git.CommitOptions{AllowEmptyCommits: true, Signer: key.Signer,
		Author: &object.Signature{Name: "Dev", Email: "dev@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	out := gitCLI(t, work, nil, "verify-commit", "-v", h.String())
	if !strings.Contains(out, `Good "git" signature for dev@example.com`) {
		t.Errorf("git verify-commit says:\n%s", out)
	}
	// And git refuses what we refuse: an unsigned commit.
	unsigned, err := wt.Commit("unsigned", &git.CommitOptions{AllowEmptyCommits: true,
		Author: &object.Signature{Name: "Dev", Email: "dev@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep := v.Revision(r.Storer, unsigned.String(), "", verify.ModeTip); verify.Reason(rep.Error()) != verify.ReasonUnsigned {
		t.Errorf("unsigned commit: %v", rep.Error())
	}
}

// TestSupplyChainGitCLIOpenPGPSignatures: a commit signed by `git commit
// -S` with gpg, which gpg itself verifies, verifies here (skipped without
// gpg).
func TestSupplyChainGitCLIOpenPGPSignatures(t *testing.T) {
	for _, tool := range []string{"git", "gpg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	// About one key in two hundred that the test generates makes gpg
	// write signatures gpg itself calls BAD (`git verify-commit`): the
	// key, not the verifier, is at fault then, and another is made.
	for attempt := 1; ; attempt++ {
		key, dir, env := gpgSignedCommit(t)
		vc := exec.Command("git", "verify-commit", "HEAD")
		vc.Dir, vc.Env = dir, append(os.Environ(), env...)
		if out, err := vc.CombinedOutput(); err != nil {
			if attempt < 5 {
				t.Logf("gpg does not verify its own signature with the generated key (attempt %d): %v\n%s", attempt, err, out)
				continue
			}
			t.Fatalf("gpg does not verify its own signatures with %d generated keys: %v\n%s", attempt, err, out)
		}
		r, err := git.PlainOpen(dir)
		if err != nil {
			t.Fatal(err)
		}
		head, err := r.Head()
		if err != nil {
			t.Fatal(err)
		}
		rep := verifier(t, key).Revision(r.Storer, head.Hash().String(), "", verify.ModeTip)
		if err := rep.Error(); err != nil {
			t.Fatalf("a commit gpg signed, which gpg verifies, does not verify: %v", err)
		}
		t.Logf("gpg's commit: %s", rep.Results[0])
		return
	}
}

// gpgSignedCommit imports a new key into a new gpg home and makes a
// repository whose one commit `git commit -S` signed with it; it returns
// the key, the repository and the environment that reaches that home.
func gpgSignedCommit(t *testing.T) (*verifytest.Key, string, []string) {
	t.Helper()
	key := verifytest.PGPKey(t, "Dev", "dev@example.com", nil)
	dir := t.TempDir()
	// A short GNUPGHOME: gpg-agent's socket path must stay short.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
		os.RemoveAll(home)
	})
	env := []string{"GNUPGHOME=" + home}
	gpg := exec.Command("gpg", "--batch", "--import")
	gpg.Env = append(os.Environ(), env...)
	gpg.Stdin = bytes.NewReader(key.Private)
	if out, err := gpg.CombinedOutput(); err != nil {
		t.Skipf("gpg cannot import a key here: %v\n%s", err, out)
	}
	gitCLI(t, dir, env, "init", "-q", "-b", "main")
	for _, kv := range [][2]string{{"user.name", "Dev"}, {"user.email", "dev@example.com"}, {"user.signingkey", key.Signer.Fingerprint()}} {
		gitCLI(t, dir, env, "config", kv[0], kv[1])
	}
	gitCLI(t, dir, env, "commit", "-q", "--allow-empty", "-S", "-m", "signed by gpg")
	return key, dir, env
}

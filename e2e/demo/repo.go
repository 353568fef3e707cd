package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ensureRepo creates fleet.git in state holding examples/<example>/fleet
// on branch main, once; later runs reuse it (and the user's commits in it).
func ensureRepo(state, example string) (string, error) {
	bare := filepath.Join(state, "fleet.git")
	if _, err := git.PlainOpen(bare); err == nil {
		return bare, nil
	}
	work := filepath.Join(state, "fleet-init")
	_ = os.RemoveAll(work)
	defer os.RemoveAll(work)
	if _, err := git.PlainInitWithOptions(bare, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}}); err != nil {
		return "", err
	}
	r, err := git.PlainInitWithOptions(work, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(work, os.DirFS(filepath.Join("examples", example, "fleet"))); err != nil {
		return "", err
	}
	wt, err := r.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.AddGlob("."); err != nil {
		return "", err
	}
	sig := &object.Signature{Name: "propagit demo", Email: "demo@propagit.invalid", When: time.Now()}
	if _, err := wt.Commit(example+" fleet", &git.CommitOptions{Author: sig}); err != nil {
		return "", err
	}
	if _, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bare}}); err != nil {
		return "", err
	}
	return bare, r.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})
}

// applied reports whether the status JSON shows every cluster Ready at the
// revision it wants.
func applied(out []byte) bool {
	var rep struct {
		Clusters []struct {
			Ready           string `json:"ready"`
			WantRevision    string `json:"wantRevision"`
			AppliedRevision string `json:"appliedRevision"`
		} `json:"clusters"`
	}
	if json.Unmarshal(out, &rep) != nil || len(rep.Clusters) == 0 {
		return false
	}
	for _, c := range rep.Clusters {
		if c.Ready != "True" || c.AppliedRevision != c.WantRevision {
			return false
		}
	}
	return true
}

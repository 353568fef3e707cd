package controller

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/source"
)

// fetchRepo is a Git repository with a worktree to commit fleets into.
type fetchRepo struct {
	dir string
	wt  *git.Worktree
}

func newFetchRepo(t *testing.T) *fetchRepo {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &fetchRepo{dir: dir, wt: wt}
}

// commit makes the worktree hold exactly files and commits it.
func (r *fetchRepo) commit(t *testing.T, files map[string]string) {
	t.Helper()
	entries, _ := os.ReadDir(r.dir)
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(r.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
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
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}
	if _, err := r.wt.Commit("c", &git.CommitOptions{Author: sig, All: true}); err != nil {
		t.Fatal(err)
	}
}

// treeOf returns every file in fs by path, and fails on an empty folder.
func treeOf(t *testing.T, fs filesys.FileSystem) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.Walk("/", func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if entries, _ := fs.ReadDir(p); len(entries) == 0 && p != "/" {
				t.Errorf("empty folder %s left behind", p)
			}
			return nil
		}
		b, err := fs.ReadFile(p)
		out[strings.TrimPrefix(p, "/")] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGitFetcherReadsOnlyWhatChanged: the next revision rewrites the files
// that changed and removes those (and the folders) it lost; what the
// snapshot holds is exactly the revision's tree. A read that fails (a file
// over the limit) leaves nothing half-updated for the revision after it.
func TestGitFetcherReadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	repo := newFetchRepo(t)
	f := GitFetcher(source.NewFollower(source.FollowOptions{URL: "file://" + filepath.ToSlash(repo.dir), Branch: "main",
		Limits: source.Limits{MaxFileBytes: 100}})).(*gitFetcher)
	check := func(step string, want map[string]string, written int) {
		t.Helper()
		before := 0 // a failed or first read starts a new folder
		if f.files != nil {
			before = f.files.written
		}
		snap, err := f.Fetch(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := treeOf(t, snap.FS); !maps.Equal(got, want) {
			t.Errorf("%s: snapshot holds %v, want %v", step, got, want)
		}
		if n := f.files.written - before; n != written {
			t.Errorf("%s: %d files read, want %d", step, n, written)
		}
	}
	v1 := map[string]string{"app/a.yaml": "a1", "app/b.yaml": "b1", "other/sub/c.yaml": "c1"}
	repo.commit(t, v1)
	check("first revision", v1, 3)

	v2 := map[string]string{"app/a.yaml": "a2", "app/b.yaml": "b1", "app/d.yaml": "d1"}
	repo.commit(t, v2)
	check("one file changed, one added, a folder removed", v2, 2)
	check("same revision again", v2, 0)

	repo.commit(t, map[string]string{"app/a.yaml": "a3", "app/b.yaml": strings.Repeat("x", 200)})
	if _, err := f.Fetch(ctx); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("a file over the limit: %v, want a limit error", err)
	}
	repo.commit(t, v2)
	check("after a failed read", v2, 3) // read afresh: nothing half-updated is trusted
}

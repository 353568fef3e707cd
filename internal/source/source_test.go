package source

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/gitrepo"
)

// memFS records written files; it is the FileWriter of these tests.
type memFS map[string]string

func (m memFS) WriteFile(path string, data []byte) error {
	m[path] = string(data)
	return nil
}

func (m memFS) paths() []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// history is a scripted repository: three commits on main, a tag v1 on the
// first, and the hashes in commit order.
type history struct {
	dir    string
	repo   *git.Repository
	hashes []string
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commit writes files ("" deletes one), stages everything and commits with
// a fixed author and time, so hashes are stable.
func (h *history) commit(t *testing.T, msg string, files map[string]string) string {
	t.Helper()
	writeFiles(t, h.dir, files)
	wt, err := h.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(len(h.hashes)) * time.Minute)}
	hash, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	h.hashes = append(h.hashes, hash.String())
	return hash.String()
}

func newHistory(t *testing.T) *history {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &history{dir: dir, repo: repo}
	h.commit(t, "one", map[string]string{"fleet/a.yaml": "a: 1\n", "fleet/sub/b.yaml": "b: 1\n", "README.md": "hi\n"})
	if _, err := repo.CreateTag("v1", plumbing.NewHash(h.hashes[0]), nil); err != nil {
		t.Fatal(err)
	}
	h.commit(t, "two", map[string]string{"fleet/a.yaml": "a: 2\n"})
	h.commit(t, "three", map[string]string{"fleet/sub/b.yaml": "", "fleet/c.yaml": "c: 3\n"})
	return h
}

func TestTreeResolvesRevisions(t *testing.T) {
	h := newHistory(t)
	repo, err := Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rev      string
		wantHash string
		want     memFS
	}{
		{"main", h.hashes[2], memFS{"/a.yaml": "a: 2\n", "/c.yaml": "c: 3\n"}},
		{"HEAD~1", h.hashes[1], memFS{"/a.yaml": "a: 2\n", "/sub/b.yaml": "b: 1\n"}},
		{"v1", h.hashes[0], memFS{"/a.yaml": "a: 1\n", "/sub/b.yaml": "b: 1\n"}},
		{h.hashes[0][:7], h.hashes[0], memFS{"/a.yaml": "a: 1\n", "/sub/b.yaml": "b: 1\n"}},
		{h.hashes[1], h.hashes[1], memFS{"/a.yaml": "a: 2\n", "/sub/b.yaml": "b: 1\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.rev, func(t *testing.T) {
			got := memFS{}
			rev, err := repo.Tree(tt.rev, "fleet/", got)
			if err != nil {
				t.Fatal(err)
			}
			if rev.Hash != tt.wantHash || rev.Name != tt.rev || rev.WorkingTree {
				t.Errorf("revision = %+v, want hash %s", rev, tt.wantHash)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
		})
	}
}

func TestTreeErrors(t *testing.T) {
	h := newHistory(t)
	repo, err := Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ rev, dir, want string }{
		{"nope", "", `failed to resolve revision "nope"`},
		{"main", "../etc", `invalid path "../etc"`},
		{"main", "missing", `failed to find folder "missing"`},
		{WorkingTree, "missing", `failed to find folder "missing" in the working tree`},
	} {
		if _, err := repo.Tree(tt.rev, tt.dir, memFS{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Tree(%q, %q) error = %v, want it to contain %q", tt.rev, tt.dir, err, tt.want)
		}
	}
}

func TestWorkingTreeSeesUncommittedChanges(t *testing.T) {
	h := newHistory(t)
	writeFiles(t, h.dir, map[string]string{
		"fleet/a.yaml":           "a: uncommitted\n",
		"fleet/c.yaml":           "",
		"fleet/new.yaml":         "new: untracked\n",
		".gitignore":             "*.tmp\nout/\n",
		"fleet/scratch.tmp":      "ignored\n",
		"fleet/out/x.yaml":       "ignored: folder\n",
		"fleet/nested/.git/HEAD": "ref: refs/heads/main\n",
		"fleet/nested/n.yaml":    "another repository\n",
	})
	repo, err := Open(context.Background(), filepath.Join(h.dir, "fleet")) // a folder inside the checkout
	if err != nil {
		t.Fatal(err)
	}
	got := memFS{}
	rev, err := repo.Tree(WorkingTree, "fleet", got)
	if err != nil {
		t.Fatal(err)
	}
	if !rev.WorkingTree || rev.Hash != h.hashes[2] || rev.String() != "working tree" {
		t.Errorf("revision = %+v", rev)
	}
	want := memFS{"/a.yaml": "a: uncommitted\n", "/new.yaml": "new: untracked\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

func TestBareAndShallowRepositories(t *testing.T) {
	h := newHistory(t)
	gitrepo.Install()
	bare := t.TempDir()
	if _, err := git.PlainClone(bare, true, &git.CloneOptions{URL: gitrepo.TransportURL(h.dir)}); err != nil {
		t.Fatal(err)
	}
	repo, err := Open(context.Background(), bare)
	if err != nil {
		t.Fatal(err)
	}
	got := memFS{}
	if _, err := repo.Tree("main~2", "fleet", got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/a.yaml", "/sub/b.yaml"}, got.paths()); d != "" {
		t.Errorf("bare files (-want +got):\n%s", d)
	}
	if _, err := repo.Tree(WorkingTree, "", memFS{}); err == nil || !strings.Contains(err.Error(), "has no working tree") {
		t.Errorf("working tree of a bare repository: error = %v", err)
	}

	shallow := shallowCopy(t, h)
	repo, err = Open(context.Background(), shallow)
	if err != nil {
		t.Fatal(err)
	}
	got = memFS{}
	if rev, err := repo.Tree("HEAD", "fleet", got); err != nil || rev.Hash != h.hashes[2] {
		t.Fatalf("Tree(HEAD) of a shallow clone = %+v, %v", rev, err)
	}
	if d := cmp.Diff([]string{"/a.yaml", "/c.yaml"}, got.paths()); d != "" {
		t.Errorf("shallow files (-want +got):\n%s", d)
	}
	if _, err := repo.Tree("HEAD~1", "fleet", memFS{}); err == nil || !strings.Contains(err.Error(), "shallow clone") {
		t.Errorf("Tree(HEAD~1) of a depth-1 clone: error = %v, want a shallow-clone hint", err)
	}
}

// shallowCopy builds a depth-1 clone of h by hand (go-git's server does not
// serve shallow fetches): the head commit, its tree and blobs, and the
// shallow file naming the commit.
func shallowCopy(t *testing.T, h *history) string {
	t.Helper()
	dir := t.TempDir()
	dst, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	head := plumbing.NewHash(h.hashes[2])
	commit, err := h.repo.CommitObject(head)
	if err != nil {
		t.Fatal(err)
	}
	copyObject := func(hash plumbing.Hash) {
		obj, err := h.repo.Storer.EncodedObject(plumbing.AnyObject, hash)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Storer.SetEncodedObject(obj); err != nil {
			t.Fatal(err)
		}
	}
	copyObject(head)
	copyObject(commit.TreeHash)
	tree, _ := commit.Tree()
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		_, entry, err := walker.Next()
		if err != nil {
			break
		}
		copyObject(entry.Hash)
	}
	if err := dst.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", head)); err != nil {
		t.Fatal(err)
	}
	if err := dst.Storer.SetShallow([]plumbing.Hash{head}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFileURLNeedsNoGitBinary clones over file:// with an empty PATH: the
// transport is go-git's in-process server (gitrepo), never git-upload-pack.
func TestFileURLNeedsNoGitBinary(t *testing.T) {
	h := newHistory(t)
	t.Setenv("PATH", "")
	repo, err := Open(context.Background(), "file://"+filepath.ToSlash(h.dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := client.Protocols[gitrepo.Scheme]; !ok {
		t.Errorf("no in-process transport registered under %s", gitrepo.Scheme)
	}
	for _, rev := range []string{"main", "v1", "HEAD~1"} {
		got := memFS{}
		if _, err := repo.Tree(rev, "fleet", got); err != nil {
			t.Fatalf("Tree(%s): %v", rev, err)
		}
		if len(got) == 0 {
			t.Errorf("Tree(%s) copied no files", rev)
		}
	}
	if _, err := repo.Tree(WorkingTree, "fleet", memFS{}); err == nil {
		t.Error("a cloned repository has no working tree, want an error")
	}
}

func TestURLCredentialsNeverInErrors(t *testing.T) {
	_, err := Open(context.Background(), "https://alice:s3cr3t-t0ken@127.0.0.1:1/fleet.git?private_token=q7q7")
	if err == nil {
		t.Fatal("want an error")
	}
	for _, secret := range []string{"s3cr3t-t0ken", "alice", "q7q7"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q leaks %q", err, secret)
		}
	}
	if !strings.Contains(err.Error(), "https://127.0.0.1:1/fleet.git") {
		t.Errorf("error %q does not name the redacted URL", err)
	}
}

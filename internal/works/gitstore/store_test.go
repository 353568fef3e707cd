package gitstore

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
)

// TestPutRetriesWhenBranchMoved: another writer pushes between this store's
// fetch and its push; the push is rejected, and the store refetches,
// rebuilds on the new tip and pushes again.
func TestPutRetriesWhenBranchMoved(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		a, b := r.store(t), r.store(t)
		if _, err := a.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		a.beforePush = func() {
			once.Do(func() {
				if _, err := b.Put(ctx, "rev2", fleet(2, 1, "rev2", "b")); err != nil {
					t.Errorf("concurrent put: %v", err)
				}
			})
		}
		changed, err := a.Put(ctx, "rev3", fleet(3, 1, "rev3", "c"))
		if err != nil {
			t.Fatal(err)
		}
		// Rebuilt on b's commit: every cluster changed against it.
		if d := cmp.Diff([]string{"c0", "c1", "c2"}, changed); d != "" {
			t.Errorf("changed (-want +got):\n%s", d)
		}
		hist := r.History(t, worksBranch)
		if len(hist) != 3 || !strings.HasPrefix(hist[0].Message, "propagit: render rev3") ||
			!strings.HasPrefix(hist[1].Message, "propagit: render rev2") {
			t.Fatalf("history = %d commits, newest %q", len(hist), hist[0].Message)
		}
		got, err := b.List(ctx)
		if err != nil || len(got) != 3 || got[2].Spec.SourceRevision != "rev3" {
			t.Errorf("List after retry = %v, %v", got, err)
		}
	})
}

func TestPutGivesUpAfterPushAttempts(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	a := r.store(t, func(o *Options) { o.PushAttempts = 2 })
	b := r.store(t)
	n := 0
	a.beforePush = func() {
		n++
		if _, err := b.Put(ctx, "other", fleet(1, 1, "other", string(rune('a'+n)))); err != nil {
			t.Errorf("concurrent put: %v", err)
		}
	}
	_, err := a.Put(ctx, "rev1", fleet(1, 1, "rev1", "z"))
	if err == nil || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Fatalf("error = %v, want a rejection after 2 attempts", err)
	}
	if n != 2 {
		t.Errorf("push attempts = %d, want 2", n)
	}
}

func TestListClusterReadsOneFolder(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		agent := r.store(t)
		if w, err := agent.ListCluster(ctx, "c1"); err != nil || w != nil {
			t.Fatalf("ListCluster on an absent branch = %v, %v", w, err)
		}
		ctrl := r.store(t)
		if _, err := ctrl.Put(ctx, "rev1", fleet(3, 2, "rev1", "a")); err != nil {
			t.Fatal(err)
		}
		for i, value := range []string{"a", "b"} {
			if i > 0 {
				if _, err := ctrl.Put(ctx, "rev2", fleet(3, 2, "rev2", value)); err != nil {
					t.Fatal(err)
				}
			}
			w, err := agent.ListCluster(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}
			want := fleet(3, 2, "rev1", value)[1]
			if i > 0 {
				want.Spec.SourceRevision = "rev2"
			}
			if d := cmp.Diff(decoded(t, want), decoded(t, w)); d != "" {
				t.Errorf("ListCluster after put %d (-want +got):\n%s", i, d)
			}
		}
		if w, err := agent.ListCluster(ctx, "c9"); err != nil || w != nil {
			t.Errorf("ListCluster of an unknown cluster = %v, %v", w, err)
		}
		shallow, _ := agent.agent.Shallow()
		if r.Name == "http" && len(shallow) == 0 {
			t.Errorf("agent fetch over HTTP is not shallow")
		}
		if _, err := agent.ListCluster(ctx, "../c1"); err == nil {
			t.Errorf("ListCluster accepted a path")
		}
	})
}

func TestCacheDirSurvivesRestart(t *testing.T) {
	r := httpRemote(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	g := r.store(t, func(o *Options) { o.CacheDir = dir })
	if _, err := g.Put(ctx, "rev1", fleet(2, 50, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	fetches := r.Srv.Fetches()
	restarted := r.store(t, func(o *Options) { o.CacheDir = dir })
	ws, err := restarted.List(ctx)
	if err != nil || len(ws) != 2 || len(ws[1].Spec.Manifests) != 50 {
		t.Fatalf("List after restart = %d works, %v", len(ws), err)
	}
	if n := r.Srv.Fetches() - fetches; n != 0 {
		t.Errorf("a restart with a warm cache downloaded a pack %d times", n)
	}
}

func TestErrorsHideCredentials(t *testing.T) {
	r := httpRemote(t)
	ctx := ctxT(t)
	for name, opts := range map[string]Options{
		"password in the URL": {URL: strings.Replace(r.URL, "http://", "http://agent:wrong-pass@", 1)},
		"basic auth":          {URL: r.URL, Auth: &githttp.BasicAuth{Username: "agent", Password: "wrong-pass"}},
		"token in the query":  {URL: "http://127.0.0.1:1/x.git?token=wrong-pass"},
	} {
		g, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for op, err := range map[string]error{
			"List":      second(g.List(ctx)),
			"Put":       second(g.Put(ctx, "r", fleet(1, 1, "r", "a"))),
			"GetStatus": second(g.GetStatus(ctx, "c")),
			"PutStatus": g.PutStatus(ctx, "c", &workv1alpha1.WorkStatus{AppliedRevision: "r"}),
		} {
			if err == nil {
				t.Errorf("%s: %s succeeded with wrong credentials", name, op)
				continue
			}
			if strings.Contains(err.Error(), "wrong-pass") {
				t.Errorf("%s: %s error shows the password: %v", name, op, err)
			}
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestNewGitStoreValidates(t *testing.T) {
	for name, opts := range map[string]Options{
		"no URL":     {},
		"bad branch": {URL: "file:///x", Branch: "a..b"},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	g, err := New(Options{URL: "file:///x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.GetStatus(ctxT(t), "a/b"); err == nil || errors.Is(err, nil) {
		t.Errorf("GetStatus accepted a cluster name with a slash")
	}
}

func TestLocalPathAndFileURLReachTheSameRepository(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	byPath := r.store(t, func(o *Options) { o.URL = r.Dir })
	if _, err := byPath.Put(ctx, "rev1", fleet(1, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	ws, err := r.store(t).List(ctx) // file://
	if err != nil || len(ws) != 1 {
		t.Fatalf("List over file:// = %v, %v", ws, err)
	}
	if client.Protocols["file"] == client.Protocols[gitrepo.Scheme] {
		t.Errorf("Store replaced go-git's file:// transport")
	}
}

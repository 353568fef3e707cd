package works

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/gitserver"
)

// remote is a bare repository reachable by a GitStore, and its folder.
type remote struct {
	name string
	url  string
	auth *githttp.BasicAuth
	dir  string
	srv  *gitserver.Server
}

// fileRemote is an empty bare repository served in-process over file://.
func fileRemote(t testing.TB) *remote {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "works.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	return &remote{name: "file", url: "file://" + dir, dir: dir}
}

// httpRemote is an empty bare repository behind git http-backend with basic
// auth.
func httpRemote(t testing.TB) *remote {
	t.Helper()
	srv, err := gitserver.New(t.TempDir(), gitserver.Options{Username: "agent", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	url, err := srv.InitBare("works.git")
	if err != nil {
		t.Fatal(err)
	}
	return &remote{name: "http", url: url, auth: &githttp.BasicAuth{Username: "agent", Password: "s3cret"},
		dir: filepath.Join(srv.Root, "works.git"), srv: srv}
}

// eachRemote runs f against a file:// and a smart-HTTP remote.
func eachRemote(t *testing.T, f func(t *testing.T, r *remote)) {
	for _, mk := range []func(testing.TB) *remote{fileRemote, httpRemote} {
		r := mk(t)
		t.Run(r.name, func(t *testing.T) { f(t, r) })
	}
}

// store returns a new GitStore on r with mods applied to its options.
func (r *remote) store(t testing.TB, mods ...func(*GitOptions)) *GitStore {
	t.Helper()
	opts := GitOptions{URL: r.url}
	if r.auth != nil {
		opts.Auth = r.auth
	}
	for _, m := range mods {
		m(&opts)
	}
	g, err := NewGitStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// repo opens the bare repository directly.
func (r *remote) repo(t testing.TB) *git.Repository {
	t.Helper()
	repo, err := git.PlainOpen(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// history returns the commits reachable from ref, newest first; none when
// the ref does not exist.
func (r *remote) history(t testing.TB, ref plumbing.ReferenceName) []*object.Commit {
	t.Helper()
	repo := r.repo(t)
	h, err := repo.Reference(ref, true)
	if err == plumbing.ErrReferenceNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []*object.Commit
	c, err := repo.CommitObject(h.Hash())
	for err == nil {
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		c, err = c.Parent(0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tipFiles returns the files of ref's tip commit by path.
func (r *remote) tipFiles(t testing.TB, ref plumbing.ReferenceName) map[string]string {
	t.Helper()
	hist := r.history(t, ref)
	if len(hist) == 0 {
		return nil
	}
	tree, err := hist[0].Tree()
	if err != nil {
		t.Fatal(err)
	}
	files, err := gitrepo.ReadFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, b := range files {
		out[p] = string(b)
	}
	return out
}

const worksBranch = plumbing.ReferenceName("refs/heads/propagit/works")

// obj is a manifest; extra fields are merged at the top level.
func obj(apiVersion, kind, ns, name string, extra map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// configMap is a namespaced manifest with data.
func configMap(ns, name string, data map[string]any) map[string]any {
	return obj("v1", "ConfigMap", ns, name, map[string]any{"data": data})
}

// newTestWork builds a Work of cluster at rev holding objs.
func newTestWork(cluster, rev string, objs ...map[string]any) *workv1alpha1.Work {
	w := newWork(cluster, workv1alpha1.WorkSpec{FormatVersion: workv1alpha1.FormatVersion, SourceRevision: rev})
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: raw})
	}
	return w
}

// fleet returns Works for n clusters ("c0"…) with perCluster ConfigMaps
// each, at rev, the data holding value.
func fleet(n, perCluster int, rev, value string) []*workv1alpha1.Work {
	var out []*workv1alpha1.Work
	for i := range n {
		var objs []map[string]any
		for j := range perCluster {
			objs = append(objs, configMap("app", fmt.Sprintf("cm-%03d", j), map[string]any{"v": value, "i": fmt.Sprint(j)}))
		}
		out = append(out, newTestWork(fmt.Sprintf("c%d", i), rev, objs...))
	}
	return out
}

// testStatus is a status at revision rev whose Ready condition is ready,
// with heartbeat at.
func testStatus(rev string, ready metav1.ConditionStatus, at time.Time) *workv1alpha1.WorkStatus {
	return &workv1alpha1.WorkStatus{
		AppliedRevision: rev,
		Heartbeat:       &metav1.Time{Time: at},
		AgentVersion:    "v0.1.0",
		Conditions: []metav1.Condition{
			{Type: "Applied", Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: metav1.Time{Time: at}},
			{Type: "Ready", Status: ready, Reason: "Applied", Message: "applied", LastTransitionTime: metav1.Time{Time: at}},
		},
		Inventory: []workv1alpha1.ObjectRef{
			{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: "a"}, Version: "v1"},
			{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: "b"}, Version: "v1"},
		},
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

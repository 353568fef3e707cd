package gitstore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestPutIdenticalWorksTwiceMakesOneCommit(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		g := r.store(t)
		ctx := ctxT(t)
		ws := fleet(2, 3, "rev1", "a")
		changed, err := g.Put(ctx, "rev1", ws)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"c0", "c1"}, changed); d != "" {
			t.Errorf("first put changed (-want +got):\n%s", d)
		}
		var refs, fetches, pushes int64
		if r.Srv != nil {
			refs, fetches, pushes = r.Srv.RefAdvertisements(), r.Srv.Fetches(), r.Srv.Pushes()
		}
		changed, err = g.Put(ctx, "rev1", fleet(2, 3, "rev1", "a"))
		if err != nil || len(changed) != 0 {
			t.Fatalf("second put = %v, %v; want nothing changed", changed, err)
		}
		if r.Srv != nil {
			// An unchanged Put costs one ref listing: no pack, no push.
			got := [3]int64{r.Srv.RefAdvertisements() - refs, r.Srv.Fetches() - fetches, r.Srv.Pushes() - pushes}
			if got != [3]int64{1, 0, 0} {
				t.Errorf("unchanged put: ref listings, fetches, pushes = %v, want [1 0 0]", got)
			}
		}
		hist := r.History(t, worksBranch)
		if len(hist) != 1 {
			t.Fatalf("commits = %d, want 1", len(hist))
		}
		msg := hist[0].Message
		if !strings.HasPrefix(msg, "propagit: render rev1\n") || !strings.Contains(msg, "\nSource-Revision: rev1\n") {
			t.Errorf("commit message = %q", msg)
		}
	})
}

func TestPutReportsOnlyChangedClusters(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		g := r.store(t)
		ctx := ctxT(t)
		if _, err := g.Put(ctx, "rev1", fleet(3, 2, "rev1", "a")); err != nil {
			t.Fatal(err)
		}
		// rev2 changes c1 only; the others are the same apart from the revision.
		ws := fleet(3, 2, "rev2", "a")
		ws[1] = fleet(3, 2, "rev2", "b")[1]
		changed, err := g.Put(ctx, "rev2", ws)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"c1"}, changed); d != "" {
			t.Errorf("changed (-want +got):\n%s", d)
		}
		files := r.TipFiles(t, worksBranch)
		for cluster, want := range map[string]string{"c0": "rev1", "c1": "rev2", "c2": "rev1"} {
			if !strings.Contains(files[cluster+"/work.yaml"], "sourceRevision: "+want+"\n") {
				t.Errorf("%s/work.yaml = %q, want sourceRevision %s", cluster, files[cluster+"/work.yaml"], want)
			}
		}
		// rev3 changes nothing for anyone: no commit.
		changed, err = g.Put(ctx, "rev3", fleet(3, 2, "rev3", "a")[:1])
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"c1", "c2"}, changed); d != "" {
			t.Errorf("removing c1, c2: changed (-want +got):\n%s", d)
		}
		if n := len(r.History(t, worksBranch)); n != 3 {
			t.Errorf("commits = %d, want 3", n)
		}
		changed, err = g.Put(ctx, "rev4", fleet(3, 2, "rev4", "a")[:1])
		if err != nil || len(changed) != 0 {
			t.Errorf("unchanged put = %v, %v", changed, err)
		}
		if n := len(r.History(t, worksBranch)); n != 3 {
			t.Errorf("commits after a revision that changes nothing = %d, want 3", n)
		}
	})
}

func TestPutRemovesFolderOfAbsentCluster(t *testing.T) {
	r := fileRemote(t)
	g := r.store(t)
	ctx := ctxT(t)
	if _, err := g.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	changed, err := g.Put(ctx, "rev2", fleet(1, 1, "rev2", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c1"}, changed); d != "" {
		t.Errorf("changed (-want +got):\n%s", d)
	}
	var paths []string
	for p := range r.TipFiles(t, worksBranch) {
		paths = append(paths, p)
	}
	if d := cmp.Diff([]string{"c0/app/configmap.core_cm-000.yaml", "c0/work.yaml"}, paths, sortStrings); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	changed, err = g.Put(ctx, "rev3", nil)
	if err != nil || len(changed) != 1 {
		t.Fatalf("removing every cluster = %v, %v", changed, err)
	}
	if files := r.TipFiles(t, worksBranch); len(files) != 0 {
		t.Errorf("files after removing every cluster = %v", files)
	}
}

func TestPutWritesRenderLayout(t *testing.T) {
	r := fileRemote(t)
	g := r.store(t)
	w := newTestWork("member1", "abc",
		obj("apps/v1", "Deployment", "web", "nginx", map[string]any{"spec": map[string]any{"replicas": 2}}),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "system:reader", nil),
		configMap("web", "cfg", map[string]any{"b": "2", "a": "1"}),
	)
	w.Spec.Suspended = true
	if _, err := g.Put(ctxT(t), "abc", []*workv1alpha1.Work{w}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"member1/work.yaml": "apiVersion: propagit.io/v1alpha1\nkind: Work\nmetadata:\n  name: member1\n" +
			"spec:\n  cluster: member1\n  formatVersion: 1\n  sourceRevision: abc\n  suspended: true\n",
		"member1/web/deployment.apps_nginx.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\n" +
			"  namespace: web\nspec:\n  replicas: 2\n",
		"member1/_cluster/clusterrole.rbac.authorization.k8s.io_system:reader.yaml": "apiVersion: rbac.authorization.k8s.io/v1\n" +
			"kind: ClusterRole\nmetadata:\n  name: system:reader\n",
		"member1/web/configmap.core_cfg.yaml": "apiVersion: v1\ndata:\n  a: \"1\"\n  b: \"2\"\nkind: ConfigMap\nmetadata:\n" +
			"  name: cfg\n  namespace: web\n",
	}
	if d := cmp.Diff(want, r.TipFiles(t, worksBranch)); d != "" {
		t.Errorf("branch files (-want +got):\n%s", d)
	}
}

func TestPutRefusesBadWorks(t *testing.T) {
	g := fileRemote(t).store(t)
	dup := configMap("a", "x", nil)
	for name, ws := range map[string][]*workv1alpha1.Work{
		"two works for one cluster": {newTestWork("c", "r"), newTestWork("c", "r")},
		"cluster name with a slash": {newTestWork("a/b", "r")},
		"two manifests, one path":   {newTestWork("c", "r", dup, dup)},
	} {
		if _, err := g.Put(ctxT(t), "r", ws); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestListRoundTripsManifests(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		if ws, err := r.store(t).List(ctx); err != nil || ws != nil {
			t.Fatalf("List of an absent branch = %v, %v; want nothing", ws, err)
		}
		in := []*workv1alpha1.Work{
			newTestWork("b", "rev1",
				configMap("z", "last", map[string]any{"n": "1"}),
				obj("apps/v1", "Deployment", "a", "web", map[string]any{"spec": map[string]any{"replicas": int64(3), "paused": false}}),
				obj("v1", "Namespace", "", "a", nil)),
			newTestWork("a", "rev1"),
		}
		if _, err := r.store(t).Put(ctx, "rev1", in); err != nil {
			t.Fatal(err)
		}
		got, err := r.store(t).List(ctx) // a new store: what a restarted controller sees
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
			t.Fatalf("List = %v, want works a and b", got)
		}
		want := in[0].DeepCopy()
		// Manifests come back sorted by namespace, kind, group and name.
		m := want.Spec.Manifests
		want.Spec.Manifests = append(m[2:3], m[1], m[0])
		if d := cmp.Diff(decoded(t, want), decoded(t, got[1])); d != "" {
			t.Errorf("work b (-want +got):\n%s", d)
		}
		if got[0].Spec.Manifests != nil || got[0].Spec.SourceRevision != "rev1" {
			t.Errorf("work a = %+v", got[0].Spec)
		}
	})
}

var sortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// TestNewestRevisionIsTheLastPutThatChangedAWork pins the fix for a stale
// summary: Works keep the revision that last changed them, so after rev2
// changes c1 only, c0 still says rev1 and the first Work's revision is not
// the newest. The store knows the newest from the tip commit.
func TestNewestRevisionIsTheLastPutThatChangedAWork(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		g := r.store(t)
		ctx := ctxT(t)
		if rev, err := g.NewestRevision(ctx); err != nil || rev != "" {
			t.Fatalf("empty store: NewestRevision = %q, %v; want \"\"", rev, err)
		}
		if _, err := g.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
			t.Fatal(err)
		}
		ws := fleet(2, 1, "rev2", "a")
		ws[1] = fleet(2, 1, "rev2", "b")[1]
		if _, err := g.Put(ctx, "rev2", ws); err != nil {
			t.Fatal(err)
		}
		listed, err := g.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if listed[0].Spec.SourceRevision != "rev1" {
			t.Fatalf("c0 keeps rev1 (its content did not change), got %q", listed[0].Spec.SourceRevision)
		}
		if rev, err := g.NewestRevision(ctx); err != nil || rev != "rev2" {
			t.Errorf("NewestRevision = %q, %v; want rev2", rev, err)
		}
	})
}

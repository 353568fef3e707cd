package gitstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// withValue returns ws at rev with manifest j of cluster i holding value v.
func withValue(ws []*workv1alpha1.Work, rev string, i, j int, v string) []*workv1alpha1.Work {
	out := make([]*workv1alpha1.Work, len(ws))
	for k, w := range ws {
		cp := *w
		cp.Spec.SourceRevision = rev
		cp.Spec.Manifests = append([]runtime.RawExtension(nil), w.Spec.Manifests...)
		out[k] = &cp
	}
	var o map[string]any
	if err := json.Unmarshal(out[i].Spec.Manifests[j].Raw, &o); err != nil {
		panic(err)
	}
	o["data"].(map[string]any)["v"] = v
	raw, _ := json.Marshal(o)
	out[i].Spec.Manifests[j] = runtime.RawExtension{Raw: raw}
	return out
}

// written returns what g wrote since before.
func written(g *Store, before works.WriteCounts) works.WriteCounts {
	now := g.Written()
	return works.WriteCounts{Blobs: now.Blobs - before.Blobs, Trees: now.Trees - before.Trees,
		StatusWrites: now.StatusWrites - before.StatusWrites, StatusEntries: now.StatusEntries - before.StatusEntries}
}

// checkFromScratch fails unless every cluster folder at the tip of the work
// branch has the hash a tree written from its files alone has, so no
// reused hash stands for other content.
func checkFromScratch(t *testing.T, r *remote) {
	t.Helper()
	root := r.tipTree(t)
	for _, e := range root.Entries {
		if e.Mode != filemode.Dir {
			continue
		}
		sub, err := root.Tree(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		files, err := gitrepo.ReadFiles(sub)
		if err != nil {
			t.Fatal(err)
		}
		h, err := gitrepo.WriteFiles(memory.NewStorage(), files)
		if err != nil {
			t.Fatal(err)
		}
		if h != e.Hash {
			t.Errorf("folder %s is %s, its files make %s", e.Name, e.Hash, h)
		}
	}
}

// sourceRevisions returns each cluster's recorded source revision.
func sourceRevisions(t *testing.T, r *remote) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, content := range r.TipFiles(t, worksBranch) {
		if cluster, ok := strings.CutSuffix(p, "/"+works.WorkFile); ok {
			_, rev, _ := strings.Cut(content, "sourceRevision: ")
			out[cluster], _, _ = strings.Cut(rev, "\n")
		}
	}
	return out
}

func TestPutWritesOnlyWhatChanged(t *testing.T) {
	r := fileRemote(t)
	g := r.store(t)
	ctx := ctxT(t)
	ws := fleet(3, 20, "rev1", "a")
	if _, err := g.Put(ctx, "rev1", ws); err != nil {
		t.Fatal(err)
	}
	before := g.Written()
	ws = withValue(ws, "rev2", 1, 7, "b")
	changed, err := g.Put(ctx, "rev2", ws)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c1"}, changed); d != "" {
		t.Errorf("changed (-want +got):\n%s", d)
	}
	// The object and c1's work.yaml; the folder app/, c1/ and the root.
	if got := written(g, before); got.Blobs != 2 || got.Trees != 3 {
		t.Errorf("one object changed: wrote %d blobs and %d trees, want 2 and 3", got.Blobs, got.Trees)
	}
	checkFromScratch(t, r)
	if d := cmp.Diff(map[string]string{"c0": "rev1", "c1": "rev2", "c2": "rev1"}, sourceRevisions(t, r)); d != "" {
		t.Errorf("source revisions (-want +got):\n%s", d)
	}
	// The same object changed for every cluster: its blob is written once.
	before = g.Written()
	all := withValue(withValue(withValue(ws, "rev3", 0, 9, "c"), "rev3", 1, 9, "c"), "rev3", 2, 9, "c")
	if changed, err := g.Put(ctx, "rev3", all); err != nil || len(changed) != 3 {
		t.Fatalf("a change for every cluster = %v, %v; want 3 clusters changed", changed, err)
	}
	if got := written(g, before); got.Blobs != 4 || got.Trees != 7 {
		t.Errorf("one object changed everywhere: wrote %d blobs and %d trees, want 4 and 7", got.Blobs, got.Trees)
	}
	checkFromScratch(t, r)
	ws = all
	before = g.Written()
	if changed, err := g.Put(ctx, "rev4", withValue(ws, "rev4", 0, 0, "a")); err != nil || len(changed) != 0 {
		t.Fatalf("an unchanged put = %v, %v; want nothing changed", changed, err)
	}
	if got := written(g, before); got.Blobs != 0 || got.Trees != 0 {
		t.Errorf("nothing changed: wrote %d blobs and %d trees, want none", got.Blobs, got.Trees)
	}
}

func TestPutAfterRestartBuildsOnTheTip(t *testing.T) {
	for name, dir := range map[string]bool{"memory": false, "cache dir": true} {
		t.Run(name, func(t *testing.T) {
			r := fileRemote(t)
			ctx := ctxT(t)
			mod := func(o *Options) {}
			if dir {
				cache := t.TempDir()
				mod = func(o *Options) { o.CacheDir = cache }
			}
			ws := fleet(3, 20, "rev1", "a")
			if _, err := r.store(t, mod).Put(ctx, "rev1", ws); err != nil {
				t.Fatal(err)
			}
			restarted := r.store(t, mod)
			changed, err := restarted.Put(ctx, "rev2", withValue(ws, "rev2", 2, 3, "b"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"c2"}, changed); d != "" {
				t.Errorf("changed (-want +got):\n%s", d)
			}
			if got := written(restarted, works.WriteCounts{}); got.Blobs != 2 || got.Trees != 3 {
				t.Errorf("one object changed after a restart: wrote %d blobs and %d trees, want 2 and 3", got.Blobs, got.Trees)
			}
			checkFromScratch(t, r)
			if d := cmp.Diff(map[string]string{"c0": "rev1", "c1": "rev1", "c2": "rev2"}, sourceRevisions(t, r)); d != "" {
				t.Errorf("source revisions (-want +got):\n%s", d)
			}
		})
	}
}

// A tip moved by another writer is what the next Put builds on: the index
// of the tree this store last wrote is not.
func TestPutOnATipMovedBySomeoneElse(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	g, other := r.store(t), r.store(t)
	ws := fleet(2, 10, "rev1", "a")
	if _, err := g.Put(ctx, "rev1", ws); err != nil {
		t.Fatal(err)
	}
	moved := withValue(ws, "rev2", 1, 4, "b")
	if _, err := other.Put(ctx, "rev2", moved); err != nil {
		t.Fatal(err)
	}
	// g now renders what other recorded: nothing changed on the tip.
	changed, err := g.Put(ctx, "rev3", withValue(moved, "rev3", 0, 0, "a"))
	if err != nil || len(changed) != 0 {
		t.Fatalf("put of the tip's content = %v, %v; want nothing changed", changed, err)
	}
	if n := len(r.History(t, worksBranch)); n != 2 {
		t.Errorf("commits = %d, want 2", n)
	}
	// And back to g's first content: c1 changes again, on top of other's.
	changed, err = g.Put(ctx, "rev4", withValue(ws, "rev4", 0, 0, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c1"}, changed); d != "" {
		t.Errorf("changed (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"c0": "rev1", "c1": "rev4"}, sourceRevisions(t, r)); d != "" {
		t.Errorf("source revisions (-want +got):\n%s", d)
	}
	checkFromScratch(t, r)
	got, err := r.store(t).List(ctx)
	if err != nil || len(got) != 2 || !strings.Contains(string(got[1].Spec.Manifests[4].Raw), `"v":"a"`) {
		t.Fatalf("c1 after the last put = %v, %v; want value a back", got, err)
	}
}

// tipTree returns the root tree at the tip of the work branch.
func (r *remote) tipTree(t *testing.T) *object.Tree {
	t.Helper()
	hist := r.History(t, worksBranch)
	if len(hist) == 0 {
		t.Fatal("no work branch")
	}
	tree, err := hist[0].Tree()
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// A Put that changes a Work builds on the tree this store recorded and
// pushes on the lease of that tree's commit: one ref listing (the push's)
// and no fetch.
func TestPutPushesOnALease(t *testing.T) {
	r := httpRemote(t)
	g := r.store(t)
	ctx := ctxT(t)
	ws := fleet(2, 5, "rev1", "a")
	if _, err := g.Put(ctx, "rev1", ws); err != nil {
		t.Fatal(err)
	}
	refs, fetches, pushes := r.Srv.RefAdvertisements(), r.Srv.Fetches(), r.Srv.Pushes()
	if _, err := g.Put(ctx, "rev2", withValue(ws, "rev2", 0, 1, "b")); err != nil {
		t.Fatal(err)
	}
	got := [3]int64{r.Srv.RefAdvertisements() - refs, r.Srv.Fetches() - fetches, r.Srv.Pushes() - pushes}
	if got != [3]int64{1, 0, 1} {
		t.Errorf("changed put: ref listings, fetches, pushes = %v, want [1 0 1]", got)
	}
	checkFromScratch(t, r)
	if d := cmp.Diff(map[string]string{"c0": "rev2", "c1": "rev1"}, sourceRevisions(t, r)); d != "" {
		t.Errorf("source revisions (-want +got):\n%s", d)
	}
}

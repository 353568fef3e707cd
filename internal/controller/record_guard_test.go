package controller

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/works"
)

// guardFleet is a fleet of one push member, m1, that runs the ConfigMaps of
// namespace app.
type guardFleet struct {
	t     *testing.T
	fs    filesys.FileSystem
	store *works.GitStore
	clock *clocktesting.FakeClock
	revs  int
}

func newGuardFleet(t *testing.T) *guardFleet {
	dir := filepath.Join(t.TempDir(), "works.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	opts := works.DefaultGitOptions()
	opts.URL = "file://" + dir
	store, err := works.NewGitStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &guardFleet{t: t, fs: filesys.MakeFsInMemory(), store: store, clock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))}
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Push\n")
	f.write("policy.yaml", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: all\n  namespace: app\n"+
		"spec:\n  resourceSelectors:\n  - apiVersion: v1\n    kind: ConfigMap\n  placement:\n    clusterAffinity:\n      clusterNames: [m1]\n")
	f.write("namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n")
	return f
}

func (f *guardFleet) write(name, content string) {
	if err := f.fs.WriteFile(filepath.Join("/repo", name), []byte(content)); err != nil {
		f.t.Fatal(err)
	}
}

// configMaps writes (keep) or removes ConfigMaps prefix-0 … prefix-(n-1).
func (f *guardFleet) configMaps(prefix string, n int, keep bool) {
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if !keep {
			if err := f.fs.RemoveAll(filepath.Join("/repo", "cm", name+".yaml")); err != nil {
				f.t.Fatal(err)
			}
			continue
		}
		f.write(filepath.Join("cm", name+".yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\n  namespace: app\ndata:\n  k: v\n")
	}
}

// controller returns a controller reading the works store, as one that
// just started.
func (f *guardFleet) controller() *Controller {
	c := New(DefaultOptions(), nil, f.store, nil, nil, logr.Discard())
	c.clock = f.clock
	return c
}

// commit renders and records the folder as a new revision with message,
// an hour after the last, and returns m1's recorded Work.
func (f *guardFleet) commit(c *Controller, message string) *workv1alpha1.Work {
	f.t.Helper()
	f.revs++
	f.clock.Step(time.Hour)
	set, err := c.files.Load(f.fs, "/repo")
	if err != nil {
		f.t.Fatal(err)
	}
	cur := &loaded{revision: fmt.Sprintf("%040d", f.revs), set: set, interp: set.Interpreter(), allowPrune: guard.Allowed(message)}
	ws, rec, err := c.renderWorks(context.Background(), cur, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := c.works.Put(context.Background(), cur.revision, ws); err != nil {
		f.t.Fatal(err)
	}
	c.recorded = rec
	for _, w := range ws {
		if w.Spec.Cluster == "m1" {
			return w
		}
	}
	f.t.Fatal("no Work for m1")
	return nil
}

// TestPruneGuardHoldsADeletionSplitAcrossCommits: one commit pads the
// member with 90 cheap ConfigMaps, the next deletes the 10 real ones (10 of
// 101 objects, under the guard's half). The guard measures the deletion
// against what the member ran before the padding, and holds it — also
// when the controller restarted between the two commits, since the window
// is read back from the works store.
func TestPruneGuardHoldsADeletionSplitAcrossCommits(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			f := newGuardFleet(t)
			c := f.controller()
			f.configMaps("real", 10, true)
			f.commit(c, "the application")
			f.configMaps("pad", 90, true)
			f.commit(c, "some settings")
			if restart {
				c = f.controller()
			}
			f.configMaps("real", 10, false)
			w := f.commit(c, "tidy up")
			held := w.Annotations[workv1alpha1.AnnotationPruneHeld]
			if !strings.Contains(held, "to 10 of the 11") || len(w.Spec.Manifests) != 101 {
				t.Fatalf("the split deletion went ahead: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
			}
			w = f.commit(c, "tidy up\n\nPropagit-Allow-Prune: true\n")
			if held := w.Annotations[workv1alpha1.AnnotationPruneHeld]; held != "" || len(w.Spec.Manifests) != 91 {
				t.Fatalf("the acknowledged deletion: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
			}
		})
	}
}

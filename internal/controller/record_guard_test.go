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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// guardFleet is a fleet of one push member, m1, that runs the ConfigMaps of
// namespace app.
type guardFleet struct {
	t     *testing.T
	fs    filesys.FileSystem
	store *gitstore.Store
	clock *clocktesting.FakeClock
	revs  int
	// status is what the members report, by name; none counts as Ready.
	status map[string]*clusterv1alpha1.ClusterStatus
}

func newGuardFleet(t *testing.T) *guardFleet {
	dir := filepath.Join(t.TempDir(), "works.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	opts := gitstore.DefaultOptions()
	opts.URL = "file://" + dir
	store, err := gitstore.New(opts)
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
	ws, rec, err := c.renderWorks(context.Background(), cur, f.status)
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

// ready sets what member reports: Ready or not since the fleet's clock.
func (f *guardFleet) ready(member string, ready bool) {
	if f.status == nil {
		f.status = map[string]*clusterv1alpha1.ClusterStatus{}
	}
	s := metav1.ConditionTrue
	if !ready {
		s = metav1.ConditionFalse
	}
	f.status[member] = &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ConditionReady,
		Status: s, Reason: "Test", LastTransitionTime: metav1.NewTime(f.clock.Now())}}}
}

// TestPruneGuardHoldsAPruneCommittedWhileTheMemberIsDown: a commit that
// deletes 8 of a member's 10 objects lands while the member is not Ready.
// It is held as for a Ready member — recorded, it would be applied the
// moment the member came back — and stays held once it is Ready again,
// until a commit acknowledges it. (Found by make soak: such prunes went
// through.)
func TestPruneGuardHoldsAPruneCommittedWhileTheMemberIsDown(t *testing.T) {
	f := newGuardFleet(t)
	c := f.controller()
	f.configMaps("real", 10, true)
	f.commit(c, "the application")
	f.ready("m1", false)
	f.configMaps("real", 8, false)
	w := f.commit(c, "tidy up")
	if held := w.Annotations[workv1alpha1.AnnotationPruneHeld]; !strings.Contains(held, "8 of 11") || len(w.Spec.Manifests) != 11 {
		t.Fatalf("the prune went ahead on the member that is down: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
	}
	f.ready("m1", true)
	w = f.commit(c, "tidy up")
	if held := w.Annotations[workv1alpha1.AnnotationPruneHeld]; !strings.Contains(held, "8 of 11") || len(w.Spec.Manifests) != 11 {
		t.Fatalf("the prune went ahead once the member was back: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
	}
	w = f.commit(c, "tidy up\n\nPropagit-Allow-Prune: true\n")
	if held := w.Annotations[workv1alpha1.AnnotationPruneHeld]; held != "" || len(w.Spec.Manifests) != 3 {
		t.Fatalf("the acknowledged prune: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
	}
}

// TestPruneGuardLetsFailoverGo: a member that is not Ready loses all its
// applications to cluster failover; that is the policy's own decision, not
// a commit's, so the guard does not hold it.
func TestPruneGuardLetsFailoverGo(t *testing.T) {
	f := newGuardFleet(t)
	f.write("clusters/m2.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m2\nspec:\n  syncMode: Push\n")
	f.write("policy.yaml", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: all\n  namespace: app\n"+
		"spec:\n  resourceSelectors:\n  - apiVersion: v1\n    kind: ConfigMap\n  placement:\n    clusterAffinity:\n      clusterNames: [m1, m2]\n"+
		"    replicaScheduling:\n      replicaSchedulingType: Duplicated\n  failover:\n    cluster:\n      purgeMode: Directly\n")
	c := f.controller()
	f.configMaps("real", 10, true)
	if w := f.commit(c, "the application"); len(w.Spec.Manifests) != 11 {
		t.Fatalf("m1 got %d objects, want 11", len(w.Spec.Manifests))
	}
	f.ready("m1", false)
	w := f.commit(c, "a setting")
	if held := w.Annotations[workv1alpha1.AnnotationPruneHeld]; held != "" || len(w.Spec.Manifests) != 1 {
		t.Fatalf("failover off m1: %d objects recorded, prune-held %q", len(w.Spec.Manifests), held)
	}
}

package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// lostAnswer is a works store whose Put records the Works and then
// reports a failure, once armed: the remote took the push, and the
// connection dropped before its answer arrived.
type lostAnswer struct {
	*gitstore.Store
	armed bool
}

func (s *lostAnswer) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	changed, err := s.Store.Put(ctx, revision, ws)
	if err == nil && s.armed {
		s.armed = false
		return nil, errors.New("failed to push refs/heads/propagit/works: unexpected EOF")
	}
	return changed, err
}

// fleetSource serves the guard fleet's folder as revision n, message msg.
type fleetSource struct {
	f   *guardFleet
	msg string
}

func (s *fleetSource) Fetch(context.Context) (Snapshot, error) {
	return Snapshot{Revision: fmt.Sprintf("%040d", s.f.revs), Message: s.msg, FS: s.f.fs, Root: "/repo"}, nil
}

func (s *fleetSource) ReadRevision(context.Context, string) (Snapshot, error) {
	return Snapshot{}, errors.New("fleetSource keeps no past revisions")
}

// TestHeldRevisionKeepsTheWorkTheStoreHolds: a Put that failed may have
// landed, so the Work the prune guard holds a member on next is the one
// the store holds, not the one this replica last saw recorded; the soak
// (e2e/soak) saw a pull member go back a revision when a push of the
// works branch lost its answer just before a prune was held.
func TestHeldRevisionKeepsTheWorkTheStoreHolds(t *testing.T) {
	f := newGuardFleet(t)
	// A pull member, as in the soak: no member to probe or apply to.
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n")
	store := &lostAnswer{Store: f.store}
	src := &fleetSource{f: f}
	c := New(DefaultOptions(), src, store, f.store, nil, logr.Discard())
	c.clock = f.clock
	pass := func(msg string) error {
		f.revs++
		src.msg = msg
		return c.Reconcile(context.Background())
	}
	f.configMaps("real", 10, true)
	if err := pass("the application"); err != nil {
		t.Fatal(err)
	}
	f.write("cm/real-0.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real-0\n  namespace: app\ndata:\n  k: second\n")
	store.armed = true
	if err := pass("a new value"); err == nil {
		t.Fatal("the pass whose Put lost its answer did not fail")
	}
	f.configMaps("real", 10, false)
	if err := pass("tidy up"); err != nil {
		t.Fatal(err)
	}
	ws, err := f.store.List(context.Background())
	if err != nil || len(ws) != 1 {
		t.Fatalf("works store: %d Works, %v", len(ws), err)
	}
	w := ws[0]
	if w.Annotations[workv1alpha1.AnnotationPruneHeld] == "" {
		t.Fatalf("the prune was not held: %d objects recorded", len(w.Spec.Manifests))
	}
	var manifests strings.Builder
	for _, m := range w.Spec.Manifests {
		manifests.Write(m.Raw)
	}
	if !strings.Contains(manifests.String(), "second") {
		t.Errorf("the held Work went back to the revision before the one the store held (real-0 without k: second)")
	}
}

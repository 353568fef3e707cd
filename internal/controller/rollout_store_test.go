package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// unreadableRollouts is a works store whose rollouts' record cannot be
// read, as a hub Role without the ConfigMap rule leaves it.
type unreadableRollouts struct{ *gitstore.Store }

func (unreadableRollouts) Rollouts(context.Context) ([]byte, error) {
	return nil, errors.New("configmaps \"propagit-rollouts\" is forbidden")
}

// A fleet without RolloutPolicies records its Works whatever becomes of
// the rollouts' record; once a RolloutPolicy is committed, a record that
// cannot be read stops the pass with the reason (no wave is planned
// blind), and nothing is recorded.
func TestRolloutRecordUnreadable(t *testing.T) {
	f := newGuardFleet(t)
	// A pull member: no member to probe or apply to.
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n")
	store := unreadableRollouts{f.store}
	src := &fleetSource{f: f}
	c := New(DefaultOptions(), src, store, f.store, nil, logr.Discard())
	c.clock = f.clock
	f.configMaps("cm", 2, true)
	f.revs++
	if err := c.Reconcile(context.Background()); err != nil {
		t.Fatalf("a fleet without RolloutPolicies: %v", err)
	}
	f.write("rollout.yaml", "apiVersion: propagit.io/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: web, namespace: app}\nspec:\n  waves: [{name: one, clusterAffinity: {clusterNames: [m1]}}]\n")
	f.configMaps("cm", 3, true)
	f.revs++
	err := c.Reconcile(context.Background())
	if err == nil || !strings.Contains(err.Error(), "failed to read the rollouts") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("with a RolloutPolicy: err %v, want the unreadable record named", err)
	}
	ws, err := f.store.List(context.Background())
	if err != nil || len(ws) != 1 || len(ws[0].Spec.Manifests) != 3 { // the namespace and two ConfigMaps
		t.Fatalf("the pass that could not plan recorded something: %d Works, %v", len(ws), err)
	}
}

// refusedRollouts is a works store whose rollouts' record is refused: not
// signed by the controller's key (an agent pushed it).
type refusedRollouts struct{ *gitstore.Store }

func (refusedRollouts) Rollouts(context.Context) ([]byte, error) {
	return nil, &works.RefusedError{Commit: strings.Repeat("e", 40), Where: "status", What: "the rollouts record", Err: errors.New("unsigned")}
}

// TestRolloutRecordForgedIsNotPlannedFrom: a forged record is never
// planned from, and does not stop the fleet either (that would let an
// agent halt every rollout): the pass plans each rollout afresh from what
// the clusters run, records the Works and writes a record of its own.
func TestRolloutRecordForgedIsNotPlannedFrom(t *testing.T) {
	f := newGuardFleet(t)
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n")
	f.write("rollout.yaml", "apiVersion: propagit.io/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: web, namespace: app}\nspec:\n  waves: [{name: one, clusterAffinity: {clusterNames: [m1]}}]\n")
	store := refusedRollouts{f.store}
	c := New(DefaultOptions(), &fleetSource{f: f}, store, f.store, nil, logr.Discard())
	c.clock = f.clock
	f.configMaps("cm", 2, true)
	f.revs++
	if err := c.Reconcile(context.Background()); err != nil {
		t.Fatalf("a refused record stopped the pass: %v", err)
	}
	ws, err := f.store.List(context.Background())
	if err != nil || len(ws) != 1 {
		t.Fatalf("Works after the pass: %d, %v", len(ws), err)
	}
	data, err := f.store.Rollouts(context.Background())
	if err != nil || !strings.Contains(string(data), `"policy"`) {
		t.Errorf("the controller's own record was not written over the forged one: %q, %v", data, err)
	}
}

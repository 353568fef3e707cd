package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"

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

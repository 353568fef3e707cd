package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// failingSource fails every fetch, as an unreachable Git host does.
type failingSource struct{}

func (failingSource) Fetch(context.Context) (Snapshot, error) {
	return Snapshot{}, errors.New("dial tcp: connection refused")
}

func (failingSource) ReadRevision(context.Context, string) (Snapshot, error) {
	return Snapshot{}, errors.New("unreachable")
}

// TestRecorderHeartbeat: a pass that read the source and recorded writes
// the recorder heartbeat, at most every recorderHeartbeatEvery; a
// controller that cannot read its source writes none, so the heartbeat
// ages and `propagit status --exit-code` fails.
func TestRecorderHeartbeat(t *testing.T) {
	f := newGuardFleet(t)
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n")
	f.configMaps("cm", 1, true)
	src := &fleetSource{f: f}
	c := New(DefaultOptions(), src, f.store, f.store, nil, logr.Discard())
	c.clock = f.clock
	ctx := context.Background()
	beat := func() time.Time {
		t.Helper()
		state, err := f.store.RecorderHeartbeat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return state.At
	}
	start := f.clock.Now()
	for i, step := range []struct {
		advance time.Duration
		want    time.Time
	}{
		{0, start},
		{10 * time.Second, start}, // a webhook pass soon after: not written again
		{30 * time.Second, start.Add(40 * time.Second)},
	} {
		f.clock.Step(step.advance)
		f.revs++
		if err := c.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got := beat(); !got.Equal(step.want) {
			t.Errorf("pass %d: heartbeat %v, want %v", i, got, step.want)
		}
	}
	c.source = failingSource{}
	f.clock.Step(time.Minute)
	_ = c.Reconcile(ctx) // the last snapshot stays in force, the status says the source is stale
	if got := beat(); !got.Equal(start.Add(40 * time.Second)) {
		t.Errorf("a pass that could not read the source moved the heartbeat to %v", got)
	}
}

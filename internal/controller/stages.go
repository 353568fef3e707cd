package controller

import (
	"context"
	"time"

	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/works"
)

// stageClock times the stages of one reconcile pass, in order, for the
// stage histogram and the pass's debug log line: a stage that turns slow
// shows on the day it does, apart from the others.
type stageClock struct {
	clock clock.PassiveClock
	m     *metrics.Recorder
	last  time.Time
	took  []any // stage, duration, … for the log
}

func newStageClock(clk clock.PassiveClock, m *metrics.Recorder) *stageClock {
	return &stageClock{clock: clk, m: m, last: clk.Now()}
}

// done ends stage: it took the time since the previous stage ended.
func (s *stageClock) done(stage string) {
	now := s.clock.Now()
	d := now.Sub(s.last)
	s.last = now
	s.m.ReconcileStage(stage, d)
	s.took = append(s.took, stage, d.Round(time.Microsecond).String())
}

// log writes the stages of the pass that recorded revision at V(1).
func (s *stageClock) log(c *Controller, revision string) {
	c.log.V(1).Info("reconcile stages", append([]any{logging.KeyRevision, workv1alpha1.ShortRevision(revision)}, s.took...)...)
}

// timedStatus is a member's status store, adding up the time its writes
// take: the status stage of the member's sync, told apart from the apply.
// Only the member's worker calls it.
type timedStatus struct {
	works.StatusStore
	clock clock.PassiveClock
	spent time.Duration
}

func (t *timedStatus) PutStatus(ctx context.Context, cluster string, st *workv1alpha1.WorkStatus) error {
	start := t.clock.Now()
	err := t.StatusStore.PutStatus(ctx, cluster, st)
	t.spent += t.clock.Since(start)
	return err
}

// take returns the time spent writing since the last take.
func (t *timedStatus) take() time.Duration {
	d := t.spent
	t.spent = 0
	return d
}

// Costs are what the controller's passes have cost since it started, for
// benchmarks that check a commit costs what it changed.
type Costs struct {
	// TemplatesRendered counts the templates rendered anew (not taken
	// from the render memo).
	TemplatesRendered int64
	// Written is what the Works and status stores wrote, when they count
	// it (works.WriteCounter).
	Written works.WriteCounts
}

// Costs returns what the controller's passes cost so far.
func (c *Controller) Costs() Costs {
	out := Costs{TemplatesRendered: c.rendered.Load()}
	wc, ok := c.works.(works.WriteCounter)
	if ok {
		out.Written = wc.Written()
	}
	if sc, ok2 := c.status.(works.WriteCounter); ok2 && (!ok || sc != wc) {
		out.Written = out.Written.Add(sc.Written())
	}
	return out
}

package deliver

import (
	"context"

	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// driftWatch knows how to watch the objects of an inventory on a member
// and report the ones someone else changed.
type driftWatch interface {
	set(inventory []workv1alpha1.ObjectRef)
	close()
}

// Suspect signals that an applied object was changed on the member: the
// driver should call Sync soon, which checks those objects for drift and
// reads their health again.
func (s *Syncer) Suspect() <-chan struct{} { return s.suspectC }

// Close stops the drift watch.
func (s *Syncer) Close() {
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
}

// watchInventory points the drift watch at inv. The watch is built from a
// on first use, and built again when a is not the applier it was built
// from: a new applier means new credentials or a new REST mapper, and a
// watch with the old ones would watch the wrong member, or nothing.
func (s *Syncer) watchInventory(a Applier, inv []workv1alpha1.ObjectRef) {
	if s.opts.NoWatch {
		return
	}
	if s.watchOf != a {
		s.Close()
		s.watchOf = a
		s.watch = s.newWatch(a, s.log, s.suspect)
	}
	if s.watch != nil {
		s.watch.set(inv)
	}
}

// refreshWatch rebuilds a running drift watch at once when the driver now
// hands out another applier (the member's credentials changed), so an
// unchanged Work is not left with a watch on the old credentials until the
// next periodic check. Getting the applier costs no call to the member; an
// error is left for the next Sync that needs the applier to report.
func (s *Syncer) refreshWatch(ctx context.Context, inv []workv1alpha1.ObjectRef) {
	if s.opts.NoWatch || s.watchOf == nil {
		return // no watch yet: the next apply builds it
	}
	a, err := s.applier(ctx)
	if err != nil || a == s.watchOf {
		return
	}
	s.watchInventory(a, inv)
}

// suspect queues r for a health check and, when its spec or metadata may
// have drifted, a drift check, and signals the driver.
func (s *Syncer) suspect(r workv1alpha1.ObjectRef, drift bool) {
	s.mu.Lock()
	if s.suspects == nil {
		s.suspects = map[workv1alpha1.ObjectKey]bool{}
	}
	s.suspects[r.ObjectKey] = s.suspects[r.ObjectKey] || drift
	s.mu.Unlock()
	select {
	case s.suspectC <- struct{}{}:
	default:
	}
}

func (s *Syncer) hasSuspects() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.suspects) > 0
}

// takeSuspects returns and clears the queued suspects: each object whose
// health may have changed, true for those that may have drifted too.
func (s *Syncer) takeSuspects() map[workv1alpha1.ObjectKey]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.suspects
	s.suspects = nil
	return out
}

// startWatch builds the drift watch for a's member; nil when a has no
// config to watch with (a client handed in by a test) or the watch cannot
// be built: the periodic check still runs.
func startWatch(a Watchable, log logr.Logger, suspect func(workv1alpha1.ObjectRef, bool)) driftWatch {
	if a.Config() == nil {
		return nil
	}
	w, err := newWatcher(a.Config(), a.RESTMapper(), a.FieldManager(), log, suspect)
	if err != nil {
		log.Error(err, "drift watch unavailable; the periodic check still runs")
		return nil
	}
	return w
}

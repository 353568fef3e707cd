// Package deliver brings one member cluster to its Work: apply (through
// internal/apply), health, and a status record written only on transitions.
// The push controller runs one Syncer per member; the pull agent runs one
// for its own cluster — one implementation, two drivers.
package deliver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/works"
)

// Options tune a Syncer.
type Options struct {
	// HealthInterval is how often objects that are not healthy yet are
	// re-checked.
	HealthInterval time.Duration
	// RetryMin and RetryMax bound the backoff after a failed apply.
	RetryMin, RetryMax time.Duration
	// Version is written into the status as the applier's version.
	Version string
	// DriftInterval is how often an unchanged, healthy Work is compared
	// with the member as a whole and drift corrected (0: never). Between
	// these checks a watch on the applied objects reports changes at once.
	DriftInterval time.Duration
	// NoWatch turns the drift watch off: drift is then found by the
	// periodic check only.
	NoWatch bool
	// Metrics records apply results; nil records nothing.
	Metrics *metrics.Recorder
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{HealthInterval: 5 * time.Second, RetryMin: time.Second, RetryMax: 5 * time.Minute, Version: "dev",
		DriftInterval: 5 * time.Minute}
}

// Syncer applies one cluster's Works and records their status. It is not
// safe for concurrent use: one goroutine drives it.
type Syncer struct {
	cluster string
	opts    Options
	status  works.StatusStore
	manager func(context.Context) (*apply.Manager, error)
	log     logr.Logger
	clock   clock.PassiveClock

	last     *workv1alpha1.WorkStatus
	failures int
	// state is the member's own state, set by pull agents only.
	state *clusterv1alpha1.ClusterStatus
	// lastDriftCheck is when the member was last compared with the Work.
	lastDriftCheck time.Time
	// sourceErr is why the source could not be read or loaded; it goes into
	// the status message so `propagit status` shows it next to the member.
	sourceErr string
	// applied is the Work known to be on the member (its digest is the
	// status's AppliedDigest): the next Work is applied as a change to it.
	applied *workv1alpha1.Work

	// watch reports objects changed on the member; built with the first
	// manager. The suspects it reports wait in suspects until the next Sync.
	watch      *watcher
	watchTried bool
	mu         sync.Mutex
	suspects   map[workv1alpha1.ObjectKey]bool
	suspectC   chan struct{}
}

// New returns a Syncer for cluster. manager builds (or returns a cached)
// apply.Manager for the member.
func New(cluster string, opts Options, status works.StatusStore, manager func(context.Context) (*apply.Manager, error), log logr.Logger) *Syncer {
	return &Syncer{cluster: cluster, opts: opts, status: status, manager: manager, log: log, clock: clock.RealClock{},
		suspectC: make(chan struct{}, 1)}
}

// Suspect signals that an applied object was changed on the member: the
// driver should call Sync soon, which checks those objects for drift.
func (s *Syncer) Suspect() <-chan struct{} { return s.suspectC }

// Close stops the drift watch.
func (s *Syncer) Close() {
	if s.watch != nil {
		s.watch.close()
	}
}

// suspect queues r for a drift check and signals the driver.
func (s *Syncer) suspect(r workv1alpha1.ObjectRef) {
	s.mu.Lock()
	if s.suspects == nil {
		s.suspects = map[workv1alpha1.ObjectKey]bool{}
	}
	s.suspects[r.ObjectKey] = true
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

// takeSuspects returns and clears the queued suspects.
func (s *Syncer) takeSuspects() map[workv1alpha1.ObjectKey]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.suspects
	s.suspects = nil
	return out
}

// watchInventory points the drift watch at inv, building it on first use.
func (s *Syncer) watchInventory(mgr *apply.Manager, inv []workv1alpha1.ObjectRef) {
	if s.opts.NoWatch {
		return
	}
	if !s.watchTried {
		s.watchTried = true
		s.watch = startWatch(mgr, s.log, s.suspect)
	}
	if s.watch != nil {
		s.watch.set(inv)
	}
}

// Status returns the last status written (nil before the first Sync).
func (s *Syncer) Status() *workv1alpha1.WorkStatus { return s.last }

// Sync brings the member to w and returns when to run again (0: only when
// something changes). reachable is false when the member did not answer its
// last probe; then nothing is applied. An unchanged, healthy Work costs no
// API call to the member.
func (s *Syncer) Sync(ctx context.Context, w *workv1alpha1.Work, reachable bool) time.Duration {
	if s.last == nil {
		st, err := s.status.GetStatus(ctx, s.cluster)
		if err != nil {
			s.log.Error(err, "failed to read the last status")
			return s.backoff()
		}
		s.last = st
	}
	st := s.last.DeepCopy()
	st.Message = s.sourceErr
	switch {
	case w.Spec.FormatVersion > workv1alpha1.FormatVersion:
		msg := fmt.Sprintf("agent too old for Work format %d (it understands %d): nothing applied, what runs is kept; upgrade the agent", w.Spec.FormatVersion, workv1alpha1.FormatVersion)
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonFormatTooNew, msg)
		st.Message = msg
		s.write(ctx, st)
		return 0
	case w.Spec.Suspended:
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonSuspended, "dispatching is suspended; the member is not touched")
		s.write(ctx, st)
		return 0
	case !reachable:
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonMemberNotReady, "the member did not answer its last probe; applying waits")
		s.write(ctx, st)
		return 0
	}
	return s.syncReachable(ctx, w, st)
}

func (s *Syncer) syncReachable(ctx context.Context, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) time.Duration {
	d := workv1alpha1.Digest(w)
	applied := st.AppliedDigest == d
	if applied && ready(st) && !s.driftDue() && !s.hasSuspects() {
		if s.state != nil || st.Message != s.last.Message {
			s.write(ctx, st) // a heartbeat or a new message; the store skips the rest
		}
		return s.opts.DriftInterval
	}
	mgr, err := s.manager(ctx)
	if err != nil {
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonNoClient, err.Error())
		s.write(ctx, st)
		return s.backoff()
	}
	if applied && (s.driftDue() || s.hasSuspects()) {
		// Drift is corrected even while the Work is not healthy: an edit
		// that breaks the workload must not keep itself in place.
		suspects := s.takeSuspects()
		if s.driftDue() {
			suspects = nil // the periodic check looks at everything
		}
		s.correctDrift(ctx, mgr, w, st, suspects)
		s.watchInventory(mgr, st.Inventory)
		if ready(st) {
			s.write(ctx, st)
			return s.opts.DriftInterval
		}
	}
	if !applied {
		if !s.apply(ctx, mgr, w, st) {
			// Forget what was applied: a revert to it must apply (and prune)
			// again, not count as unchanged.
			st.AppliedDigest, s.applied = "", nil
			s.write(ctx, st)
			return s.backoff()
		}
		st.AppliedDigest, st.AppliedRevision, s.applied = d, w.Spec.SourceRevision, w
	}
	s.watchInventory(mgr, st.Inventory)
	healthy := s.health(ctx, mgr, st, w)
	s.failures = 0
	s.lastDriftCheck = s.clock.Now()
	s.write(ctx, st)
	if !healthy {
		return s.opts.HealthInterval
	}
	return s.opts.DriftInterval
}

func ready(st *workv1alpha1.WorkStatus) bool {
	return meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)
}

// write stores st; the store skips writes that change nothing. A cancelled
// ctx (shutdown mid-apply) still gets the status out, with a short deadline
// of its own: it holds the inventory of what was just created.
func (s *Syncer) write(ctx context.Context, st *workv1alpha1.WorkStatus) {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
	}
	st.AgentVersion = s.opts.Version
	if s.state != nil {
		now := metav1.NewTime(s.clock.Now())
		st.Cluster, st.Heartbeat = s.state, &now
	}
	if err := s.status.PutStatus(ctx, s.cluster, st); err != nil {
		s.log.Error(err, "failed to write status")
		return
	}
	s.last = st
}

// backoff doubles the retry delay up to RetryMax.
func (s *Syncer) backoff() time.Duration {
	d := s.opts.RetryMin << min(s.failures, 16)
	s.failures++
	return min(d, s.opts.RetryMax)
}

// set sets one condition, keeping the transition time when the status does
// not change.
func (s *Syncer) set(st *workv1alpha1.WorkStatus, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(s.clock.Now())})
}

// SetCluster records the member's own state (pull agents measure it) and
// stamps the heartbeat; both go out with the next status write. The status
// store decides how often a heartbeat-only change is written.
func (s *Syncer) SetCluster(st *clusterv1alpha1.ClusterStatus) {
	s.state = st
}

// SetSourceError sets (or, with "", clears) the source problem the next
// status write reports.
func (s *Syncer) SetSourceError(msg string) { s.sourceErr = msg }

// SourceError records that the Work could not be read: what is applied
// stays, and the status says the source is stale.
func (s *Syncer) SourceError(ctx context.Context, msg string) {
	s.sourceErr = msg
	if s.last == nil {
		st, err := s.status.GetStatus(ctx, s.cluster)
		if err != nil {
			return
		}
		s.last = st
	}
	st := s.last.DeepCopy()
	st.Message = msg
	s.write(ctx, st)
}

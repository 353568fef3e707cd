// Package deliver brings one member cluster to its Work: apply (through
// internal/apply), health, and a status record written only on transitions.
// The push controller runs one Syncer per member; the pull agent runs one
// for its own cluster — one implementation, two drivers. What only one
// driver knows (the pull agent's cluster state and heartbeat) is added by
// that driver through WithStamp.
package deliver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// Syncer applies one cluster's Works and records their status. It is not
// safe for concurrent use: one goroutine drives it.
type Syncer struct {
	cluster string
	opts    Options
	status  works.StatusStore
	applier func(context.Context) (Applier, error)
	log     logr.Logger
	clock   clock.PassiveClock
	// stamp adds the driver's own fields to a status about to be written.
	stamp func(*workv1alpha1.WorkStatus) bool

	last     *workv1alpha1.WorkStatus
	failures int
	// lastDriftCheck is when the member was last compared with the Work.
	lastDriftCheck time.Time
	// applied is the Work known to be on the member (its digest is the
	// status's AppliedDigest): the next Work is applied as a change to it.
	applied *workv1alpha1.Work
	// appliedDigest is applied's digest, worked out once.
	appliedDigest string
	// decoded keeps what the last apply decoded, so the next decodes only
	// the manifests that changed.
	decoded decodeMemo

	// watch reports objects changed on the member; built from watchOf, and
	// again when the driver hands over another applier (new credentials).
	// The suspects it reports wait in suspects until the next Sync.
	watch    driftWatch
	watchOf  Applier
	newWatch func(Watchable, logr.Logger, func(workv1alpha1.ObjectRef, bool)) driftWatch
	mu       sync.Mutex
	suspects map[workv1alpha1.ObjectKey]bool
	suspectC chan struct{}
}

// Option configures a Syncer.
type Option func(*Syncer)

// WithClock sets the clock (tests).
func WithClock(c clock.PassiveClock) Option { return func(s *Syncer) { s.clock = c } }

// WithStamp sets a function that adds the driver's own fields to every
// status right before it is written. When it reports true (it stamped
// something, such as a heartbeat) the status is written on every Sync, even
// when nothing else changed: the status store decides how often such a
// change goes out.
func WithStamp(stamp func(*workv1alpha1.WorkStatus) bool) Option {
	return func(s *Syncer) { s.stamp = stamp }
}

// New returns a Syncer for cluster. applier builds (or returns a cached)
// Applier for the member; when it returns another one than before, the
// drift watch is rebuilt from it.
func New(cluster string, opts Options, status works.StatusStore, applier func(context.Context) (Applier, error), log logr.Logger, options ...Option) *Syncer {
	s := &Syncer{cluster: cluster, opts: opts, status: status, applier: applier, log: log, clock: clock.RealClock{},
		newWatch: startWatch, suspectC: make(chan struct{}, 1)}
	for _, o := range options {
		o(s)
	}
	return s
}

// Status returns the last status written (nil before the first Sync).
func (s *Syncer) Status() *workv1alpha1.WorkStatus { return s.last }

// Sync brings a reachable member to w and returns when to run again (0:
// only when something changes). sourceErr ("" when none) is why the
// source could not be read or loaded; the status message carries it so
// `propagit status` shows it next to the member. An unchanged, healthy Work
// costs no API call to the member.
func (s *Syncer) Sync(ctx context.Context, w *workv1alpha1.Work, sourceErr string) time.Duration {
	st, ok := s.begin(ctx, sourceErr)
	if !ok {
		return s.backoff()
	}
	if s.held(ctx, w, st) {
		return 0
	}
	return s.syncReachable(ctx, w, st)
}

// Unreachable records that the member did not answer its last probe:
// nothing is applied, and Ready says why (unless the Work is held back for
// a reason of its own, as Sync would say). probe is the probe's own
// "Reason: message" (such as "NoCredentials: …" or "ClusterUnreachable:
// readyz failed: …"), "" when unknown; Ready's message carries it so
// `propagit status` shows the real cause next to the member. It returns 0:
// the driver calls Sync when the member answers again.
func (s *Syncer) Unreachable(ctx context.Context, w *workv1alpha1.Work, sourceErr, probe string) time.Duration {
	st, ok := s.begin(ctx, sourceErr)
	if !ok {
		return s.backoff()
	}
	if s.held(ctx, w, st) {
		return 0
	}
	msg := "the member did not answer its last probe; applying waits"
	if probe != "" {
		msg = "member not reachable: " + probe + "; applying waits"
	}
	s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, unreachableReason(probe), msg)
	s.write(ctx, st)
	return 0
}

// unreachableReason is the Ready reason of a member that did not answer:
// the probe's own when the hub holds no usable credential for it (no
// retry fixes that, someone must add or fix the Secret, and `propagit
// wait` gives up on it), MemberNotReady otherwise.
func unreachableReason(probe string) string {
	reason, _, _ := strings.Cut(probe, ":")
	switch reason {
	case workv1alpha1.ReasonNoCredentials, workv1alpha1.ReasonCredentialMismatch:
		return reason
	}
	return workv1alpha1.ReasonMemberNotReady
}

// SourceError records that the Work could not be read at all: what is
// applied stays, and the status message says the source is stale.
func (s *Syncer) SourceError(ctx context.Context, msg string) {
	if st, ok := s.begin(ctx, msg); ok {
		s.write(ctx, st)
	}
}

// begin returns a copy of the last status, read from the store on first
// use, carrying msg as its message.
func (s *Syncer) begin(ctx context.Context, msg string) (*workv1alpha1.WorkStatus, bool) {
	if s.last == nil {
		st, err := s.status.GetStatus(ctx, s.cluster)
		if err != nil {
			s.log.Error(err, "failed to read the last status")
			return nil, false
		}
		s.last = st
	}
	st := s.last.DeepCopy()
	st.Message = msg
	return st, true
}

// held records why w must not be applied at all, if so: a format newer
// than this build understands, or dispatching suspended.
func (s *Syncer) held(ctx context.Context, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) bool {
	switch {
	case w.Spec.FormatVersion > workv1alpha1.FormatVersion:
		msg := fmt.Sprintf("agent too old for Work format %d (it understands %d): nothing applied, what runs is kept; upgrade the agent", w.Spec.FormatVersion, workv1alpha1.FormatVersion)
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonFormatTooNew, msg)
		st.Message = msg
	case w.Spec.Suspended:
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonSuspended, "dispatching is suspended; the member is not touched")
	default:
		return false
	}
	s.write(ctx, st)
	return true
}

// syncReachable applies w when it is not on the member yet, corrects drift
// when a check is due or the watch reported suspects, and reads health.
func (s *Syncer) syncReachable(ctx context.Context, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) time.Duration {
	d := workv1alpha1.Digest(w)
	applied := st.AppliedDigest == d
	if applied && ready(st) && !s.driftDue() && !s.hasSuspects() {
		s.refreshWatch(ctx, st.Inventory)
		s.put(ctx, st, st.Message != s.last.Message) // a new message or a stamp; the store skips the rest
		return s.opts.DriftInterval
	}
	a, err := s.applier(ctx)
	if err != nil {
		s.set(st, workv1alpha1.ConditionReady, metav1.ConditionFalse, workv1alpha1.ReasonNoClient, err.Error())
		s.write(ctx, st)
		return s.backoff()
	}
	if applied && (s.driftDue() || s.hasSuspects()) {
		// Drift is corrected even while the Work is not healthy: an edit
		// that breaks the workload must not keep itself in place.
		due, suspects := s.driftDue(), s.takeSuspects()
		if drifted := driftSuspects(suspects); due || len(drifted) > 0 {
			if due {
				drifted = nil // the periodic check looks at everything
			}
			s.correctDrift(ctx, a, w, st, drifted)
		}
		s.watchInventory(a, st.Inventory)
		// Health is read again for what changed, and for everything at the
		// periodic check: an application healthy once can fail later, and
		// application failover acts on what the status says.
		if due {
			suspects = nil
		}
		forgetHealth(st, suspects)
	}
	if !applied {
		if !s.apply(ctx, a, w, st) {
			// Forget what was applied: a revert to it must apply (and prune)
			// again, not count as unchanged.
			st.AppliedDigest, s.applied, s.appliedDigest = "", nil, ""
			s.write(ctx, st)
			return s.backoff()
		}
		st.AppliedDigest, st.AppliedRevision, s.applied, s.appliedDigest = d, w.Spec.SourceRevision, w, d
		s.lastDriftCheck = s.clock.Now()
	}
	s.watchInventory(a, st.Inventory)
	healthy := s.health(ctx, a, st, w)
	s.failures = 0
	s.write(ctx, st)
	if !healthy {
		return s.opts.HealthInterval
	}
	return s.opts.DriftInterval
}

package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/storer"
	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/notify"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/verify"
)

// Commit signature verification of the source: the fetcher checks the tip
// it fetched before reading its tree, and the controller refuses a revision
// that does not verify exactly as it refuses one that does not load — the
// last good revision stays in force — and reports it (log, Event, metric,
// commit status, the push members' status message, and the recorder
// heartbeat's state in the works store, which `propagit status` shows).

// EventVerificationFailed is the reason of the Warning Event of a refused
// revision.
const EventVerificationFailed = "VerificationFailed"

// SourceVerification says which commits of the source must be signed, and
// by whom.
type SourceVerification struct {
	// Mode is verify.ModeTip or verify.ModeAll.
	Mode verify.Mode
	// TrustedKeys is the trusted-keys file or folder (a mounted Secret);
	// it is read again for every new revision, so a rotated Secret takes
	// effect without a restart.
	TrustedKeys string
	// Since, in ModeAll, is the revision from which commits must be
	// signed until this process has verified one ("" for the whole
	// history).
	Since  string
	Limits verify.Limits

	mu sync.Mutex
	// verified is the last revision that verified.
	verified string
}

// UnverifiedError is a fetched revision whose commits do not verify.
type UnverifiedError struct {
	// Revision is the tip fetched.
	Revision string
	// Reason is one of verify.Reasons.
	Reason string
	Err    error
}

func (e *UnverifiedError) Error() string {
	return fmt.Sprintf("revision %s is not verified: %v", workv1alpha1.ShortRevision(e.Revision), e.Err)
}

func (e *UnverifiedError) Unwrap() error { return e.Err }

// check verifies rev in objects; nil when it verifies (or verified last).
func (s *SourceVerification) check(objects storer.EncodedObjectStorer, rev string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev == s.verified {
		return nil
	}
	keys, err := verify.ReadKeys(s.TrustedKeys, s.Limits)
	if err != nil {
		return &UnverifiedError{Revision: rev, Reason: verify.ReasonError, Err: err}
	}
	base := s.verified
	if base == "" {
		base = s.Since
	}
	rep := verify.New(keys, s.Limits).Revision(objects, rev, base, s.Mode)
	if err := rep.Error(); err != nil {
		return &UnverifiedError{Revision: rev, Reason: verify.Reason(err), Err: err}
	}
	s.verified = rev
	return nil
}

// VerifiedGitFetcher is GitFetcher whose every new tip must verify first:
// an unverified tip is an *UnverifiedError, and its tree is never read.
func VerifiedGitFetcher(f *source.Follower, v *SourceVerification) Fetcher {
	return &gitFetcher{f: f, verify: func(rev string) error {
		return f.WithObjects(func(s storer.EncodedObjectStorer) error { return v.check(s, rev) })
	}}
}

// refuseUnverified keeps the last good revision in force when the newest
// does not verify, and reports it once per new refusal.
func (c *Controller) refuseUnverified(uv *UnverifiedError) (*loaded, error) {
	c.opts.Metrics.SourceUnverified(uv.Reason)
	err := fmt.Errorf("%w; %s", uv, c.inForce("verifies"))
	c.mu.Lock()
	c.state.Fetched = uv.Revision
	isNew := c.state.SourceError != err.Error()
	c.mu.Unlock()
	if isNew {
		c.opts.Metrics.SourceVerificationFailed(uv.Reason)
		c.reportUnverified(uv, err)
	}
	return c.keepLast(err), err
}

// reportUnverified records a Warning Event on every member's Work and
// sets a failed commit status on the refused revision.
func (c *Controller) reportUnverified(uv *UnverifiedError, err error) {
	c.log.Info("source revision refused: a commit does not verify", logging.KeyRevision, workv1alpha1.ShortRevision(uv.Revision), "reason", uv.Reason)
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last != nil {
		for _, cl := range last.set.Clusters {
			c.event(cl.Cluster.Name, corev1.EventTypeWarning, EventVerificationFailed, err.Error())
		}
	}
	c.opts.Notifier.Observe(context.Background(), notify.Rollout{Revision: uv.Revision, Refused: uv.Err.Error()})
}

// asUnverified returns err's *UnverifiedError, or nil.
func asUnverified(err error) *UnverifiedError {
	var uv *UnverifiedError
	if errors.As(err, &uv) {
		return uv
	}
	return nil
}

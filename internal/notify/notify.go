// Package notify tells the Git host and chat how a revision rolls out, so
// "merged" reads as "running on the members": a commit status per revision
// ("propagit: 12/12 clusters healthy", pending → success or failure) through
// the GitHub or GitLab commit status API, and a Slack-compatible JSON
// message to any webhook. Each sink gets one request per change of a
// revision's state or counts, never a stream of identical ones.
package notify

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
)

// Rollout is where one revision stands across the members it targets.
type Rollout struct {
	Revision string
	// Total members; Healthy of them run it applied and healthy, Failed
	// failed to apply it; the rest are on their way (or unreachable).
	Total, Healthy, Failed int
	// Refused, when set, is why the revision is not applied anywhere (its
	// commits do not verify): the state is failure and the description
	// says why.
	Refused string
	// Waves, while a RolloutPolicy's rollout of the revision is under
	// way, says where ("wave 2/3 (eu) soaking"): the state stays pending,
	// whatever the members report, since the later waves do not run the
	// revision yet. Stopped, when a rollout halted or rolled back, says
	// why: the state is failure.
	Waves, Stopped string
}

// Commit statuses, as both GitHub and GitLab name them.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
)

// State is pending while members are on their way, success when all run
// it healthy, failure when any failed to apply it.
func (r Rollout) State() string {
	switch {
	case r.Failed > 0 || r.Refused != "" || r.Stopped != "":
		return StateFailure
	case r.Waves != "":
		return StatePending
	case r.Healthy == r.Total:
		return StateSuccess
	}
	return StatePending
}

// Description is the one line a commit status shows.
func (r Rollout) Description() string {
	if r.Refused != "" {
		return truncate("propagit: not applied: "+r.Refused, maxDescription)
	}
	if r.Stopped != "" {
		return truncate("propagit: "+r.Stopped, maxDescription)
	}
	s := "propagit: "
	if r.Waves != "" {
		s += r.Waves + ", "
	}
	s += fmt.Sprintf("%d/%d clusters healthy", r.Healthy, r.Total)
	if r.Failed > 0 {
		s += fmt.Sprintf(", %d failed", r.Failed)
	}
	return truncate(s, maxDescription)
}

// maxDescription is the longest description GitHub accepts.
const maxDescription = 140

// truncate shortens s to at most n bytes, ending in "…" when cut, without
// splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Sink knows how to deliver one rollout state somewhere.
type Sink interface {
	Send(ctx context.Context, r Rollout) error
}

// Notifier sends each new rollout state to its sinks in the background.
type Notifier struct {
	sinks   []Sink
	log     logr.Logger
	timeout time.Duration

	mu   sync.Mutex
	last map[string]Rollout // the last state sent, per revision
	wg   sync.WaitGroup
}

// New returns a Notifier; each send is bounded by timeout.
func New(log logr.Logger, timeout time.Duration, sinks ...Sink) *Notifier {
	return &Notifier{sinks: sinks, log: log, timeout: timeout, last: map[string]Rollout{}}
}

// Observe sends r to every sink unless it is what was last sent for its
// revision. It never blocks on the network; Wait waits for the sends.
func (n *Notifier) Observe(ctx context.Context, r Rollout) {
	if n == nil || len(n.sinks) == 0 || r.Revision == "" || r.Total == 0 && r.Refused == "" {
		return
	}
	n.mu.Lock()
	if n.last[r.Revision] == r {
		n.mu.Unlock()
		return
	}
	n.last[r.Revision] = r
	n.mu.Unlock()
	for _, s := range n.sinks {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.timeout)
			defer cancel()
			if err := s.Send(sctx, r); err != nil {
				n.log.Error(err, "failed to send a rollout notification", "revision", r.Revision, "state", r.State())
			}
		}()
	}
}

// Wait waits for the sends in flight.
func (n *Notifier) Wait() {
	if n != nil {
		n.wg.Wait()
	}
}

// Package agent is pull mode: a process inside a member that the hub cannot
// reach. It reads only its own cluster's Work (from the Git work branch or a
// Work CR on a hub), applies it locally with the same deliver.Syncer the
// push controller uses, and reports status, its cluster's state and a
// heartbeat. It never sees other members' Works or credentials.
package agent

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/works"
)

// Source knows how to read one cluster's Work; nil when there is none yet.
type Source interface {
	ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error)
}

// Agent applies its cluster's Work to the member it runs in.
type Agent struct {
	opts   Options
	source Source
	status works.StatusStore
	member *rest.Config
	log    logr.Logger
	clock  clock.WithTicker
	syncer *deliver.Syncer
	mgr    *apply.Manager

	lastProbe time.Time
	// state is the member's state as last measured; it goes out, with a
	// heartbeat, in every status the syncer writes.
	state *clusterv1alpha1.ClusterStatus
	// refused is the last commit whose Works were refused (see refuse).
	refused string
}

// New builds an agent; member is the rest.Config of the cluster it runs in.
func New(opts Options, src Source, status works.StatusStore, member *rest.Config, log logr.Logger) *Agent {
	a := &Agent{opts: opts, source: src, status: status, member: member, log: log, clock: clock.RealClock{}}
	a.syncer = deliver.New(opts.Cluster, opts.Deliver, status, a.applier, log, deliver.WithClock(a.clock), deliver.WithStamp(a.stamp))
	return a
}

// stamp adds the member's state and a heartbeat to a status about to be
// written; nothing before the first measurement. The status store decides
// how often a heartbeat-only change is written.
func (a *Agent) stamp(st *workv1alpha1.WorkStatus) bool {
	if a.state == nil {
		return false
	}
	now := metav1.NewTime(a.clock.Now())
	st.Cluster, st.Heartbeat = a.state, &now
	return true
}

func (a *Agent) applier(ctx context.Context) (deliver.Applier, error) {
	if a.mgr == nil {
		mgr, err := apply.NewForConfig(a.member, a.opts.Apply)
		if err != nil {
			return nil, err
		}
		a.mgr = mgr
	}
	a.mgr.UseKeys(a.keys(ctx))
	return a.mgr, nil
}

// Run polls and applies until ctx ends. Invalid options are an error, not
// a panic in the ticker.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.opts.Validate(); err != nil {
		return err
	}
	ticker := a.clock.NewTicker(a.opts.Interval)
	defer ticker.Stop()
	defer a.syncer.Close()
	var retry <-chan time.Time
	for {
		if again := a.Once(ctx); again > 0 && again < a.opts.Interval {
			retry = a.clock.After(again)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		case <-retry:
		case <-a.syncer.Suspect():
		}
		retry = nil
	}
}

// Once reads the Work, measures the cluster when due, and syncs. It
// returns when to run again sooner than the poll interval (0: no hurry).
func (a *Agent) Once(ctx context.Context) time.Duration {
	if now := a.clock.Now(); now.Sub(a.lastProbe) >= a.opts.ProbeInterval {
		pctx, cancel := context.WithTimeout(ctx, a.opts.ProbeTimeout)
		a.state = cluster.Probe(pctx, a.member, now)
		cancel()
		a.lastProbe = now
	}
	w, err := a.source.ListCluster(ctx, a.opts.Cluster)
	if refused := asRefused(err); refused != nil {
		a.refuse(ctx, refused)
		return 0
	}
	if err != nil {
		a.log.Error(err, "failed to read the Work; what is applied stays")
		a.syncer.SourceError(ctx, "work source unreachable, what is applied stays: "+stableError(err))
		return 0
	}
	if w == nil {
		a.log.Info("no Work for this cluster yet")
		return 0
	}
	return a.syncer.Sync(ctx, w, "")
}

// stableError is err's text for the status: the same outage must give the
// same message on every poll, or every poll would be a status transition
// and a write (see works.StatusChanged). A network failure names a new
// local port on each attempt, and which step a reset hits (dial, read, the
// HTTP transport's peek) is a race, so it is reduced to what failed (the
// text before the first ": ", which names the source) and its root cause
// ("connection refused"). The log keeps the whole error.
func stableError(err error) string {
	msg := err.Error()
	var nerr net.Error
	if !errors.As(err, &nerr) {
		// go-git's UnexpectedError does not unwrap: fall back to the text.
		return netOp.ReplaceAllString(msg, "")
	}
	cause := err
	for u := errors.Unwrap(cause); u != nil; u = errors.Unwrap(cause) {
		cause = u
	}
	if errors.Is(cause, syscall.EPIPE) {
		// A write into a connection the peer reset: the same outage.
		cause = syscall.ECONNRESET
	}
	head, _, _ := strings.Cut(msg, ": ")
	return head + ": " + cause.Error()
}

// netOp matches the operation part of a network error's text: "dial tcp
// 127.0.0.1:443: connect: " or "read tcp 127.0.0.1:60328->127.0.0.1:443:
// read: ".
var netOp = regexp.MustCompile(`\b(?:dial|read|write) (?:tcp|udp)[46]? (?:\S+->)?\S+: (?:\w+: )?`)

package observe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/logging"
)

// Prober knows how to measure one push member's live state.
type Prober interface {
	Probe(ctx context.Context, cl *clusterv1alpha1.Cluster) *clusterv1alpha1.ClusterStatus
}

// StatusReader knows how to read the status a member's applier last wrote.
type StatusReader interface {
	GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error)
}

// Options tune an Observer.
type Options struct {
	// Timeout bounds one probe or one status read.
	Timeout time.Duration
	// Interval is how long a push member's probe result is reused: a pass
	// started by a webhook soon after another does not probe again. 0
	// probes on every pass.
	Interval time.Duration
	// FailureThreshold and SuccessThreshold are how long a new probe result
	// must hold before a member's Ready condition flips (Karmada's
	// --cluster-failure-threshold / --cluster-success-threshold).
	FailureThreshold, SuccessThreshold time.Duration
	// PullHeartbeatTimeout marks a pull member not Ready when its agent's
	// heartbeat is older; 0 disables the check.
	PullHeartbeatTimeout time.Duration
}

// Observation is one pass's view of the members.
type Observation struct {
	// Status is each member's state as the scheduler sees it; a member
	// absent from it keeps the state declared in Git.
	Status map[string]*clusterv1alpha1.ClusterStatus
	// Probes holds the raw result of each push member probed in this pass
	// (not those whose cached result was reused), before hysteresis: the
	// push worker applies only while its member answers.
	Probes map[string]*clusterv1alpha1.ClusterStatus
}

// Observer observes members. It is safe for one pass at a time.
type Observer struct {
	opts   Options
	prober Prober
	status StatusReader
	log    logr.Logger
	clock  clock.PassiveClock

	readiness *readiness
	cache     probeCache
	// pulled is each pull member's last report (state and heartbeat),
	// kept for when a read fails.
	mu     sync.Mutex
	pulled map[string]*workv1alpha1.WorkStatus
}

// New returns an Observer.
func New(opts Options, prober Prober, status StatusReader, log logr.Logger) *Observer {
	return &Observer{opts: opts, prober: prober, status: status, log: log, clock: clock.RealClock{},
		readiness: newReadiness(opts.FailureThreshold, opts.SuccessThreshold), pulled: map[string]*workv1alpha1.WorkStatus{}}
}

// Observe measures every cluster in parallel: push members are probed,
// pull members read from their status. Members no longer listed are
// forgotten, so one that comes back starts afresh.
func (o *Observer) Observe(ctx context.Context, clusters []*clusterv1alpha1.Cluster) Observation {
	obs := Observation{Status: map[string]*clusterv1alpha1.ClusterStatus{}, Probes: map[string]*clusterv1alpha1.ClusterStatus{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, cl := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var eff, raw *clusterv1alpha1.ClusterStatus
			if cl.Spec.SyncMode == clusterv1alpha1.SyncModePull {
				eff = o.pull(ctx, cl.Name)
			} else {
				eff, raw = o.push(ctx, cl)
			}
			mu.Lock()
			defer mu.Unlock()
			if eff != nil {
				obs.Status[cl.Name] = eff
			}
			if raw != nil {
				obs.Probes[cl.Name] = raw
			}
		}()
	}
	wg.Wait()
	o.forgetAllBut(clusters)
	return obs
}

// push probes cl, unless its last result is recent enough, and folds the
// probe into its readiness. raw is nil when the cached result was used.
func (o *Observer) push(ctx context.Context, cl *clusterv1alpha1.Cluster) (eff, raw *clusterv1alpha1.ClusterStatus) {
	if eff, ok := o.cache.recent(cl, o.clock.Now(), o.opts.Interval); ok {
		return eff, nil
	}
	pctx, cancel := o.withTimeout(ctx)
	defer cancel()
	raw = o.prober.Probe(pctx, cl)
	if readyStatus(raw) != metav1.ConditionTrue {
		o.log.V(1).Info("member probe failed", logging.KeyCluster, cl.Name, "reason", readyReason(raw))
	}
	eff = o.readiness.observe(cl.Name, raw, o.clock.Now())
	o.cache.keep(cl, eff, o.clock.Now())
	return eff, raw
}

func (o *Observer) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.opts.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, o.opts.Timeout)
}

// forgetAllBut drops what is kept of members not in clusters.
func (o *Observer) forgetAllBut(clusters []*clusterv1alpha1.Cluster) {
	keep := make(map[string]bool, len(clusters))
	for _, cl := range clusters {
		keep[cl.Name] = true
	}
	o.readiness.forgetAllBut(keep)
	o.cache.forgetAllBut(keep)
	o.mu.Lock()
	defer o.mu.Unlock()
	for name := range o.pulled {
		if !keep[name] {
			delete(o.pulled, name)
		}
	}
}

// CredentialProber probes members with the credentials the hub holds.
type CredentialProber struct {
	Credentials *cluster.Credentials
	Clock       clock.PassiveClock
}

// Probe implements Prober. Members whose credentials are missing are
// reported with Ready Unknown and the reason.
func (p CredentialProber) Probe(ctx context.Context, cl *clusterv1alpha1.Cluster) *clusterv1alpha1.ClusterStatus {
	cfg, err := p.Credentials.Config(ctx, cl)
	if err != nil {
		reason := workv1alpha1.ReasonNoCredentials
		if errors.Is(err, cluster.ErrCredentialMismatch) {
			reason = workv1alpha1.ReasonCredentialMismatch
		}
		st := &clusterv1alpha1.ClusterStatus{}
		st.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: reason, Message: err.Error(), LastTransitionTime: metav1.NewTime(p.Clock.Now())}}
		return st
	}
	return cluster.Probe(ctx, cfg, p.Clock.Now())
}

package controller

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/shard"
)

// member is one push member: its latest desired Work and the worker that
// applies it. Fields under mu are written by the controller loop; the rest
// belong to the worker goroutine.
type member struct {
	name string
	c    *Controller
	log  logr.Logger
	wake chan struct{}
	stop context.CancelFunc
	// done is closed when the worker has returned.
	done chan struct{}

	mu      sync.Mutex
	cluster *clusterv1alpha1.Cluster
	work    *workv1alpha1.Work
	probe   *clusterv1alpha1.ClusterStatus
	// dispatched is when work was handed over.
	dispatched time.Time

	// status is the syncer's status store, timed; timed is the source
	// revision of the last Work whose first sync was timed (the worker's
	// own): each revision's first sync is timed, not every poll's.
	status *timedStatus
	timed  string

	mgr *apply.Manager
	// mgrCred identifies the credential mgr was built with: a rotated or
	// renewed credential gets a new manager (and drift watch).
	mgrCred [sha256.Size]byte
	// credChecked is when the credential was last read for mgr: it is read
	// again at most every credentialRecheck (or at once after a renewal),
	// not on every sync.
	credChecked time.Time
	// renewChecked is when the member's token was last checked for renewal.
	renewChecked time.Time
	syncer       *deliver.Syncer
	// state is the Work state for metrics, set by the worker after a sync.
	state string
	// sourceErr is the controller's current source problem.
	sourceErr string
	// driftSeen is the time of the newest drift record an Event was
	// recorded for (the worker's own).
	driftSeen time.Time
}

func (c *Controller) member(name string) *member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[name]
}

// syncMembers starts a worker for every new push cluster and stops the
// workers of clusters removed from Git (their objects are left in place).
func (c *Controller) syncMembers(ctx context.Context, clusters []load.Cluster) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, cl := range pushClusters(clusters) {
		if !c.owns(cl.Name) {
			continue // another replica applies to it
		}
		seen[cl.Name] = true
		m := c.members[cl.Name]
		if m == nil {
			mctx, cancel := context.WithCancel(ctx)
			m = &member{name: cl.Name, c: c, log: c.log.WithValues(logging.KeyCluster, cl.Name), wake: make(chan struct{}, 1), stop: cancel,
				done: make(chan struct{})}
			m.status = &timedStatus{StatusStore: c.status, clock: c.clock}
			m.syncer = deliver.New(cl.Name, c.opts.Deliver, m.status, m.manager, m.log, deliver.WithStamp(m.stampProbe))
			c.members[cl.Name] = m
			c.wg.Add(1)
			go func() { defer c.wg.Done(); defer close(m.done); m.run(mctx) }()
		}
		m.mu.Lock()
		if m.cluster != nil && m.cluster.ResourceVersion != cl.ResourceVersion {
			m.credChecked = time.Time{} // the Cluster changed: read its credential again
		}
		m.cluster = cl
		m.mu.Unlock()
	}
	for name, m := range c.members {
		if !seen[name] {
			m.stop()
			delete(c.members, name)
			c.opts.Metrics.ForgetCluster(name)
			if c.owns(name) {
				c.log.Info("cluster removed from the source; its objects are left in place", logging.KeyCluster, name)
			}
		}
	}
}

// owns reports whether this replica applies to cluster.
func (c *Controller) owns(cluster string) bool {
	return c.opts.Sharding == nil || c.opts.Sharding.Holds(shard.MemberKey(cluster))
}

// Release stops acting on a shard key before the Lease goes to another
// replica: a member's worker is stopped and waited for, so no apply of
// this replica overlaps one of the next.
func (c *Controller) Release(key string) {
	c.mu.Lock()
	var m *member
	for name, mm := range c.members {
		if shard.MemberKey(name) == key {
			m = mm
			delete(c.members, name)
		}
	}
	c.mu.Unlock()
	if m == nil {
		return
	}
	m.stop()
	<-m.done
	c.log.Info("member handed over to another replica", logging.KeyCluster, m.name)
}

// dispatch hands every push member its Work and the current source
// problem ("" when none), and wakes its worker.
func (c *Controller) dispatch(ws []*workv1alpha1.Work, sourceErr string) {
	now := c.clock.Now()
	for _, w := range ws {
		if m := c.member(w.Spec.Cluster); m != nil {
			m.mu.Lock()
			m.work, m.sourceErr, m.dispatched = w, sourceErr, now
			m.mu.Unlock()
			m.poke()
		}
	}
}

func (m *member) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *member) setProbe(st *clusterv1alpha1.ClusterStatus) {
	m.mu.Lock()
	wasReady := ready(m.probe)
	m.probe = st
	m.mu.Unlock()
	if !wasReady && ready(st) {
		m.poke() // came back: converge at once
	}
}

// stampProbe records in the member's status what the last probe measured
// of it, its Kubernetes version and capacity, so `propagit status -o wide`
// shows them for push members as it does for pull ones. Readiness stays in
// the controller: only these two are copied, and only a change asks for a
// write.
func (m *member) stampProbe(st *workv1alpha1.WorkStatus) bool {
	m.mu.Lock()
	probe := m.probe
	m.mu.Unlock()
	if probe == nil || probe.KubernetesVersion == "" {
		return false
	}
	measured := &clusterv1alpha1.ClusterStatus{KubernetesVersion: probe.KubernetesVersion, ResourceSummary: probe.ResourceSummary.DeepCopy()}
	if equality.Semantic.DeepEqual(st.Cluster, measured) {
		return false
	}
	st.Cluster = measured
	return true
}

func ready(st *clusterv1alpha1.ClusterStatus) bool {
	return st != nil && meta.IsStatusConditionTrue(st.Conditions, clusterv1alpha1.ConditionReady)
}

// notReadyCause is the probe's Ready reason and message ("" before the
// first probe): why the member is not reachable, for its status row.
func notReadyCause(st *clusterv1alpha1.ClusterStatus) string {
	if st == nil {
		return ""
	}
	c := meta.FindStatusCondition(st.Conditions, clusterv1alpha1.ConditionReady)
	if c == nil {
		return ""
	}
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}

// run is the worker loop: it applies on every wake-up and when the drift
// watch reports a change on the member, and re-runs itself after a backoff
// when an apply failed or objects are not healthy yet.
func (m *member) run(ctx context.Context) {
	defer m.syncer.Close()
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		case <-m.syncer.Suspect():
		case <-timer:
		}
		timer = nil
		if again := m.reconcile(ctx); again > 0 {
			timer = m.c.clock.After(again)
		}
	}
}

// reconcile hands the latest Work to the syncer; it returns when to run
// again.
func (m *member) reconcile(ctx context.Context) time.Duration {
	m.mu.Lock()
	w, probe, sourceErr, dispatched := m.work, m.probe, m.sourceErr, m.dispatched
	m.mu.Unlock()
	if w == nil {
		return 0
	}
	var again time.Duration
	if ready(probe) {
		m.renewToken(ctx)
		again = m.timeSync(ctx, w, sourceErr, dispatched)
	} else {
		again = m.syncer.Unreachable(ctx, w, sourceErr, notReadyCause(probe))
	}
	state := workState(m.syncer.Status(), w)
	m.mu.Lock()
	changed := m.state != state
	m.state = state
	m.mu.Unlock()
	if changed {
		m.c.recordWorks() // the gauge follows the members, not only the reconcile passes
		m.recordTransition(state, m.syncer.Status())
	}
	m.recordDrift(m.syncer.Status())
	return again
}

// timeSync syncs w and, the first time for w, records the stages from its
// dispatch: the wait for the worker, the apply (with health) and the status
// writes.
func (m *member) timeSync(ctx context.Context, w *workv1alpha1.Work, sourceErr string, dispatched time.Time) time.Duration {
	first := w.Spec.SourceRevision != m.timed
	start := m.c.clock.Now()
	m.status.take()
	again := m.syncer.Sync(ctx, w, sourceErr)
	if !first {
		return again
	}
	m.timed = w.Spec.SourceRevision
	total, status := m.c.clock.Since(start), m.status.take()
	wait := start.Sub(dispatched)
	metricsRec := m.c.opts.Metrics
	metricsRec.ReconcileStage(metrics.StageDispatch, wait)
	metricsRec.ReconcileStage(metrics.StageApply, total-status)
	metricsRec.ReconcileStage(metrics.StageStatus, status)
	m.log.V(1).Info("member stages", logging.KeyRevision, workv1alpha1.ShortRevision(w.Spec.SourceRevision),
		metrics.StageDispatch, wait.String(), metrics.StageApply, (total - status).String(), metrics.StageStatus, status.String())
	return again
}

// recordTransition records an Event when the member's Work turns applied
// and healthy, or fails to apply.
func (m *member) recordTransition(state string, st *workv1alpha1.WorkStatus) {
	if st == nil {
		return
	}
	switch state {
	case metrics.WorkApplied:
		if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady); c != nil {
			m.c.event(m.name, corev1.EventTypeNormal, workv1alpha1.EventApplied, c.Message)
		}
	case metrics.WorkFailed:
		if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionApplied); c != nil {
			m.c.event(m.name, corev1.EventTypeWarning, workv1alpha1.EventApplyFailed, c.Message)
		}
	}
}

// recordDrift records an Event for each drift record newer than the last
// one seen.
func (m *member) recordDrift(st *workv1alpha1.WorkStatus) {
	if st == nil {
		return
	}
	newest := m.driftSeen
	for _, d := range st.Drift {
		if !d.Time.After(m.driftSeen) {
			continue
		}
		newest = maxTime(newest, d.Time.Time)
		reason := workv1alpha1.EventDriftCorrected
		if d.Action == workv1alpha1.DriftReported {
			reason = workv1alpha1.EventDriftReported
		}
		what := "changed"
		if d.Deleted {
			what = "deleted"
		}
		m.c.event(m.name, corev1.EventTypeWarning, reason, fmt.Sprintf("%s %s on the member by %q (fields %v): %s",
			d.ObjectKey, what, d.Manager, d.Fields, strings.ToLower(string(d.Action))))
	}
	m.driftSeen = newest
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// manager returns the member's apply.Manager, built on first use and again
// after the Cluster object changed, with the customizations in force.
func (m *member) manager(ctx context.Context) (deliver.Applier, error) {
	now := m.c.clock.Now()
	m.mu.Lock()
	mgr, cl, built, fresh := m.mgr, m.cluster, m.mgrCred, now.Sub(m.credChecked) < credentialRecheck
	m.mu.Unlock()
	if mgr != nil && fresh {
		mgr.Interpret(m.c.interpreter())
		return mgr, nil
	}
	cfg, err := m.c.creds.Config(ctx, cl)
	if err != nil {
		return nil, err
	}
	cred := credentialID(cfg)
	if mgr != nil && cred == built {
		mgr.Interpret(m.c.interpreter())
		mgr.UseKeys(m.c.keys(ctx, cl.Name))
		return mgr, nil
	}
	if mgr, err = apply.NewForConfig(cfg, m.c.opts.Apply); err != nil {
		return nil, err
	}
	mgr.Interpret(m.c.interpreter())
	mgr.UseKeys(m.c.keys(ctx, cl.Name))
	m.mu.Lock()
	m.mgr, m.mgrCred, m.credChecked = mgr, cred, now
	m.mu.Unlock()
	return mgr, nil
}

// credentialID digests what in cfg says where and as whom the member is
// reached.
func credentialID(cfg *rest.Config) [sha256.Size]byte {
	h := sha256.New()
	for _, b := range [][]byte{[]byte(cfg.Host), []byte(cfg.BearerToken), []byte(cfg.BearerTokenFile), cfg.CertData, cfg.KeyData,
		cfg.CAData, []byte(cfg.CAFile), []byte(cfg.CertFile), []byte(cfg.KeyFile), []byte(strconv.FormatBool(cfg.Insecure))} {
		h.Write(b)
		h.Write([]byte{0})
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// renewEvery is how often a member's token is checked for renewal, and
// credentialRecheck how often a cached applier's credential is read again
// (a credential rotated by hand is picked up within it); each is one read
// of the member's credential Secret from the hub.
const (
	renewEvery        = time.Minute
	credentialRecheck = time.Minute
)

// renewToken renews the member's short-lived token when it is due (see
// cluster.Credentials.Renew). A failure is logged and tried again at the
// next check: the token still has a third of its life.
func (m *member) renewToken(ctx context.Context) {
	now := m.c.clock.Now()
	m.mu.Lock()
	cl, due := m.cluster, now.Sub(m.renewChecked) >= renewEvery
	if due {
		m.renewChecked = now
	}
	m.mu.Unlock()
	if !due || cl == nil {
		return
	}
	r, err := m.c.creds.Renew(ctx, cl, now)
	switch {
	case err != nil:
		m.log.Error(err, "failed to renew the member's token; it is tried again", "expires", r.Expires)
	case r.Renewed:
		m.log.Info("member token renewed", "expires", r.Expires)
		m.mu.Lock()
		m.credChecked = time.Time{} // the next sync reads the new token
		m.mu.Unlock()
	}
}

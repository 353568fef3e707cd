package controller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/observe"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
	"github.com/propagit/propagit/internal/rollout"
	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/works"
)

// Controller reconciles one source into the member clusters.
type Controller struct {
	opts    Options
	source  Fetcher
	works   works.Store
	status  works.StatusStore
	creds   *cluster.Credentials
	log     logr.Logger
	clock   clock.WithTicker
	trigger chan struct{}
	// beaten is when the recorder heartbeat was last written, and beat
	// what it said (Reconcile's goroutine only).
	beaten time.Time
	beat   works.RecorderState
	// refused is the newest source revision when it does not verify, nil
	// when it verifies or none is refused; refusedSince is when this
	// process first refused it (Reconcile's goroutine only).
	refused      *UnverifiedError
	refusedSince time.Time
	// files keeps what was parsed from each source file: a commit parses
	// only the files it changed.
	files *load.Cache
	// memo keeps each template's rendering: a commit renders only the
	// templates whose inputs changed.
	memo *incremental.Memo
	// charts renders the HelmCharts (remembering renders between revisions).
	charts *charts.Charts
	// encoder keeps the JSON of the objects the last passes rendered, which
	// the memo shares with the next: a commit encodes only what changed.
	encoder *workv1alpha1.Encoder
	// history builds each render's Previous from what the last one
	// recorded, rebuilding only the templates whose objects changed.
	history incremental.History
	// observer measures the members' state: probes and pull reports.
	observer *observe.Observer
	// renderErrs are the render errors of the last pass, each logged once.
	renderErrs map[string]bool
	// recorded is what the Works last recorded hold (nil until the first
	// Put); Run and Reconcile are its only users.
	recorded *recording
	// rolls is the rollouts' state and stable renders; Reconcile is its
	// only user.
	rolls rollouts
	// unhealthy is since when each template has run unhealthy on each
	// cluster, while a policy asks for application failover; Reconcile is
	// its only user.
	unhealthy render.Unhealthy
	// fetchFailed: the last pass could not fetch the source (it may still
	// have gone on with the last good revision). failures counts the
	// passes in a row that failed to fetch or record; Run retries them with
	// a doubling delay instead of waiting for the next poll. Run and
	// Reconcile are their only users.
	fetchFailed bool
	failures    int
	// stages times the stages of the pass under way; Reconcile is its
	// only user. rendered counts the templates rendered anew (Costs).
	stages   *stageClock
	rendered atomic.Int64

	mu      sync.Mutex
	members map[string]*member
	// pullStates is each pull member's Work state as its agent last
	// reported, for the notifier.
	pullStates map[string]string
	// rolloutNote is where the rollouts of the revision in force stand,
	// for the commit status.
	rolloutNote rolloutNote
	// worksGauge serializes recordWorks.
	worksGauge sync.Mutex
	state      State
	last       *loaded // the last revision that loaded without error
	wg         sync.WaitGroup
}

// loaded is a revision that loaded cleanly.
type loaded struct {
	revision string
	set      *load.Set
	// interp runs the set's ResourceInterpreterCustomizations.
	interp *interpret.Interpreter
	// allowPrune: the commit acknowledges a large deletion.
	allowPrune bool
	// control is what the commit's trailers ask of the rollouts.
	control rollout.Control
}

// State is what the controller knows about the source, for status and
// /readyz.
type State struct {
	// Revision is the revision in force (the last one that loaded).
	Revision string `json:"revision,omitempty"`
	// Fetched is the newest revision fetched, which may not have loaded.
	Fetched string `json:"fetched,omitempty"`
	// SourceError is the last fetch or load error ("" when the last
	// reconcile was clean). Load errors name file and line.
	SourceError string    `json:"sourceError,omitempty"`
	LastSync    time.Time `json:"lastSync,omitempty"`
}

// New builds a controller.
func New(opts Options, src Fetcher, ws works.Store, ss works.StatusStore, creds *cluster.Credentials, log logr.Logger) *Controller {
	clk := clock.RealClock{}
	observer := observe.New(observe.Options{Timeout: opts.ProbeTimeout, Interval: opts.ProbeInterval,
		FailureThreshold: opts.ClusterFailureThreshold, SuccessThreshold: opts.ClusterSuccessThreshold,
		PullHeartbeatTimeout: opts.PullHeartbeatTimeout}, observe.CredentialProber{Credentials: creds, Clock: clk}, ss, log)
	return &Controller{opts: opts, source: src, works: ws, status: ss, creds: creds, log: log,
		clock: clk, trigger: make(chan struct{}, 1), files: load.NewCache(), memo: incremental.NewMemo(), charts: charts.New(helm.DefaultLimits(), opts.ChartRemote), encoder: workv1alpha1.NewEncoder(), members: map[string]*member{},
		observer: observer}
}

// Trigger asks for a fetch now (webhooks call it); it never blocks.
func (c *Controller) Trigger() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// State returns a copy of the source state.
func (c *Controller) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Ready reports whether a revision has been loaded and rendered.
func (c *Controller) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last != nil
}

// Run reconciles every Interval and on Trigger until ctx ends, then waits
// for the member workers to stop. While a Gracefully eviction waits for its
// new placement to turn healthy, or an application runs unhealthy under a
// policy with application failover, it also reconciles every
// Deliver.HealthInterval, so the old copy goes, or the application moves,
// soon after, without a commit.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.opts.Validate(); err != nil {
		return err
	}
	// The member workers and the notifier are waited for on the way out,
	// but not while a panic unwinds: waiting for workers that never stop
	// then would hang the process instead of letting it crash.
	returned := false
	defer func() {
		if returned {
			c.wg.Wait()
			c.opts.Notifier.Wait()
		}
	}()
	ticker := c.clock.NewTicker(c.opts.Interval)
	defer ticker.Stop()
	for {
		err := c.Reconcile(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.Error(err, "reconcile failed")
		}
		if err != nil || c.fetchFailed {
			c.failures++
		} else {
			c.failures = 0
		}
		var recheck <-chan time.Time
		if c.recorded != nil && c.recorded.previous.PendingGraceful() || len(c.unhealthy) > 0 || c.rolls.active {
			recheck = c.clock.After(c.opts.Deliver.HealthInterval)
		}
		var retry <-chan time.Time
		if c.failures > 0 {
			retry = c.clock.After(retryDelay(c.failures, c.opts.Interval))
		}
		var resharded <-chan struct{}
		if c.opts.Sharding != nil {
			resharded = c.opts.Sharding.Changed()
		}
		select {
		case <-ctx.Done():
			returned = true
			return nil
		case <-ticker.C():
		case <-c.trigger:
		case <-recheck:
		case <-retry:
		case <-resharded:
		}
	}
}

// retryDelay is how long Run waits after the n-th failed pass in a row: one
// second, doubling, at most the poll interval and never more than five
// minutes, so a fetch that failed on a webhook's push (a remote briefly
// unreachable, a ref being rewritten) does not wait for the next poll.
func retryDelay(n int, interval time.Duration) time.Duration {
	d := min(interval, 5*time.Minute)
	if n < 1 {
		return d
	}
	if n <= 10 {
		d = min(d, time.Second<<(n-1))
	}
	return d
}

// Reconcile runs one pass: fetch, load, observe, render, record, dispatch.
// A fetch or load error keeps the last good revision in force.
func (c *Controller) Reconcile(ctx context.Context) (err error) {
	start := c.clock.Now()
	c.stages = newStageClock(c.clock, c.opts.Metrics)
	defer func() {
		result := "success"
		if err != nil {
			result = "failure"
		}
		c.opts.Metrics.ReconcileDuration(c.clock.Since(start), result)
	}()
	cur, err := c.fetchAndLoad(ctx)
	refused := asUnverified(err) != nil
	if cur == nil {
		if refused && c.recording() {
			// Nothing verified yet (a restart on a refused tip): what is
			// recorded stays, and status says why nothing newer comes.
			c.heartbeat(ctx)
		}
		return err
	}
	sourceErr := ""
	if err != nil {
		sourceErr = err.Error()
	}
	c.track(cur.set.Clusters)
	c.wantKeys(cur.set.Clusters)
	c.syncMembers(ctx, cur.set.Clusters)
	if !c.recording() {
		return c.follow(ctx, cur, sourceErr)
	}
	status := c.observe(ctx, cur.set.Clusters)
	c.stages.done(metrics.StageObserve)
	ws, placed, err := c.renderWorks(ctx, cur, status)
	if err != nil {
		return err
	}
	c.rendered.Add(int64(c.memo.Rendered))
	c.stages.done(metrics.StageRender)
	changed, err := c.works.Put(ctx, cur.revision, ws)
	if err != nil {
		// The write may have landed (a push whose answer was lost): the
		// next pass reads what the store holds instead of trusting what
		// this replica recorded last, which the store may have moved past.
		c.mu.Lock()
		c.recorded = nil
		c.mu.Unlock()
		return fmt.Errorf("failed to record works of %s: %w", workv1alpha1.ShortRevision(cur.revision), err)
	}
	c.stages.done(metrics.StageRecord)
	c.saveRollouts(ctx)
	if len(changed) > 0 {
		c.log.Info("works recorded", logging.KeyRevision, workv1alpha1.ShortRevision(cur.revision), "changed", changed,
			"filesParsed", c.files.Parsed, "templatesRendered", c.memo.Rendered, "templatesReused", c.memo.Reused)
		c.stages.log(c, cur.revision)
	}
	c.mu.Lock() // the workers' notifyRollout reads it
	c.recorded = placed
	c.mu.Unlock()
	c.dispatch(ws, sourceErr)
	c.readPullStates(ctx, ws)
	c.recordWorks()
	if sourceErr == "" || refused {
		c.heartbeat(ctx)
	}
	return nil
}

// recorderHeartbeatEvery bounds how often the recorder heartbeat is
// written: webhook passes may come many times a minute.
const recorderHeartbeatEvery = 30 * time.Second

// heartbeat writes the recorder heartbeat to a store that keeps one, after
// a pass that read the source and recorded its Works, or found its newest
// revision refused: `propagit status` then tells a quiet repository from a
// controller that stopped, and says which revision is refused and why. It
// is written at most every recorderHeartbeatEvery, and at once when the
// verdict on the source changes. A failed write is logged; it changes
// nothing applied.
func (c *Controller) heartbeat(ctx context.Context) {
	hb, ok := c.works.(works.RecorderHeartbeats)
	if !ok {
		return
	}
	now := c.clock.Now()
	state := works.RecorderState{At: now}
	if uv := c.refused; uv != nil {
		state.RefusedRevision, state.RefusedReason, state.RefusedSince = uv.Revision, uv.Err.Error(), c.refusedSince
	}
	changed := state.RefusedRevision != c.beat.RefusedRevision || state.RefusedReason != c.beat.RefusedReason
	if !c.beaten.IsZero() && !changed && now.Sub(c.beaten) < recorderHeartbeatEvery {
		return
	}
	if state.Refused() && c.beaten.IsZero() {
		// The first write of this process: a refusal of the same revision
		// recorded before a restart keeps its time.
		if prev, err := hb.RecorderHeartbeat(ctx); err == nil && prev.RefusedRevision == state.RefusedRevision && !prev.RefusedSince.IsZero() &&
			prev.RefusedSince.Before(state.RefusedSince) {
			state.RefusedSince, c.refusedSince = prev.RefusedSince, prev.RefusedSince
		}
	}
	if err := hb.PutRecorderHeartbeat(ctx, state); err != nil {
		c.log.Error(err, "failed to write the recorder heartbeat")
		return
	}
	c.beaten, c.beat = now, state
}

// recording reports whether this replica renders and records the Works.
func (c *Controller) recording() bool {
	return c.opts.Sharding == nil || c.opts.Sharding.Holds(shard.RecorderKey)
}

// wantKeys tells the sharding which keys there are: the recorder and each
// push member.
func (c *Controller) wantKeys(clusters []load.Cluster) {
	if c.opts.Sharding == nil {
		return
	}
	keys := []string{shard.RecorderKey}
	for _, cl := range pushClusters(clusters) {
		keys = append(keys, shard.MemberKey(cl.Name))
	}
	c.opts.Sharding.Want(keys)
}

// follow is a pass of a replica that does not record: it probes the members
// it applies to and hands them the Works another replica recorded.
func (c *Controller) follow(ctx context.Context, cur *loaded, sourceErr string) error {
	// The recorder's history moves on without this replica: read it again
	// from the store if this replica records later.
	c.mu.Lock()
	c.recorded, c.unhealthy = nil, nil
	c.mu.Unlock()
	var mine []load.Cluster
	for _, cl := range cur.set.Clusters {
		if c.member(cl.Cluster.Name) != nil {
			mine = append(mine, cl)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	c.observe(ctx, mine)
	ws, err := c.works.List(ctx)
	if err != nil {
		return fmt.Errorf("failed to read the recorded works: %w", err)
	}
	c.dispatch(ws, sourceErr)
	return nil
}

// tracker is a works store with one location per member, which cannot be
// listed: it reaches the members it is told of (memberstore.Store).
type tracker interface {
	Track(clusters []string)
}

// track tells a works store with one location per member which members
// the revision declares, before anything reads the recorded Works.
func (c *Controller) track(clusters []load.Cluster) {
	t, ok := c.works.(tracker)
	if !ok {
		return
	}
	names := make([]string, 0, len(clusters))
	for _, cl := range clusters {
		names = append(names, cl.Cluster.Name)
	}
	t.Track(names)
}

// fetchAndLoad returns the revision to reconcile: the newest one when it
// fetches and loads, otherwise the last good one (nil when there is none).
func (c *Controller) fetchAndLoad(ctx context.Context) (*loaded, error) {
	snap, err := c.source.Fetch(ctx)
	c.stages.done(metrics.StageFetch)
	if uv := asUnverified(err); uv != nil {
		c.fetchFailed = false // fetched: no retry fixes a signature
		if c.refused == nil || c.refused.Revision != uv.Revision {
			c.refusedSince = c.clock.Now()
		}
		c.refused = uv
		return c.refuseUnverified(uv)
	}
	c.fetchFailed = err != nil
	if err != nil {
		c.opts.Metrics.SourceFetchError()
		err = fmt.Errorf("failed to fetch the source: %w", err)
		return c.keepLast(err), err
	}
	c.refused = nil
	c.opts.Metrics.SourceFetchSuccess(c.clock.Now())
	c.opts.Metrics.SourceUnverified("")
	c.mu.Lock()
	c.state.Fetched = snap.Revision
	same := c.last != nil && c.last.revision == snap.Revision
	c.mu.Unlock()
	if same {
		c.setClean(snap.Revision)
		return c.last, nil
	}
	set, err := c.files.Load(snap.FS, snap.Root)
	c.stages.done(metrics.StageLoad)
	if err != nil {
		err = fmt.Errorf("revision %s does not load; %s: %w", workv1alpha1.ShortRevision(snap.Revision), c.inForce("loads"), err)
		return c.keepLast(err), err
	}
	control, unknown := rollout.ParseControl(snap.Message)
	if len(unknown) > 0 {
		c.log.Info("commit trailer not understood; it is ignored", "trailer", rollout.ControlTrailer, "values", unknown, logging.KeyRevision, workv1alpha1.ShortRevision(snap.Revision))
	}
	cur := &loaded{revision: snap.Revision, set: set, interp: set.Interpreter(), allowPrune: guard.Allowed(snap.Message), control: control}
	c.mu.Lock()
	c.last = cur
	c.mu.Unlock()
	c.setClean(snap.Revision)
	return cur, nil
}

// interpreter returns the customizations of the revision in force; nil
// before one loaded.
func (c *Controller) interpreter() *interpret.Interpreter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return nil
	}
	return c.last.interp
}

func (c *Controller) keepLast(err error) *loaded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.SourceError != err.Error() {
		// Logged once per new problem, not on every poll.
		c.log.Error(err, "source problem; the last good revision stays in force", logging.KeyRevision, workv1alpha1.ShortRevision(c.state.Revision))
	}
	c.state.SourceError = err.Error()
	return c.last
}

func (c *Controller) setClean(rev string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.SourceError != "" {
		c.log.Info("source problem resolved", logging.KeyRevision, workv1alpha1.ShortRevision(rev))
	}
	c.state.Revision, c.state.SourceError, c.state.LastSync = rev, "", c.clock.Now()
}

// lastRevision is the revision in force; "" before one loaded.
func (c *Controller) lastRevision() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return ""
	}
	return c.last.revision
}

// inForce says what stays applied while the newest revision is refused:
// the last good revision, or nothing until a revision does what until says.
func (c *Controller) inForce(until string) string {
	if last := c.lastRevision(); last != "" {
		return workv1alpha1.ShortRevision(last) + " stays in force"
	}
	return "nothing is applied until a revision " + until
}

// observe measures every member and hands each push worker its member's
// fresh probe; it returns the state the scheduler sees.
func (c *Controller) observe(ctx context.Context, clusters []load.Cluster) map[string]*clusterv1alpha1.ClusterStatus {
	all := make([]*clusterv1alpha1.Cluster, 0, len(clusters))
	for _, cl := range clusters {
		all = append(all, cl.Cluster)
	}
	obs := c.observer.Observe(ctx, all)
	for name, probe := range obs.Probes {
		if m := c.member(name); m != nil {
			m.setProbe(probe)
		}
	}
	return obs.Status
}

// pushClusters returns the clusters delivered by push.
func pushClusters(cs []load.Cluster) []*clusterv1alpha1.Cluster {
	var out []*clusterv1alpha1.Cluster
	for _, c := range cs {
		if c.Cluster.Spec.SyncMode != clusterv1alpha1.SyncModePull {
			out = append(out, c.Cluster)
		}
	}
	return out
}

package controller

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/promgate"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
	"github.com/propagit/propagit/internal/rollout"
	"github.com/propagit/propagit/internal/works"
)

// rollouts is the controller's side of progressive delivery: the
// RolloutPolicies' states as the works store keeps them, the renders of
// the stable revisions that clusters not yet reached keep, and the
// digests of the objects it compared last (objects the memo carries over
// are the same pointers, so each is hashed once).
type rollouts struct {
	read   bool
	states map[string]*rollout.State
	saved  []byte
	// pending is the document to write once the Works it describes are
	// recorded.
	pending []byte
	stable  map[string]*stableRender
	digests map[*unstructured.Unstructured]string
	// pass counts the planning passes (a stable render is made once per
	// pass).
	pass int
	// gateWhy is why each (policy, wave, cluster) gate last did not hold,
	// so each reason is logged once.
	gateWhy map[string]string
	// active: some rollout is under way, so Run reconciles again after
	// the health interval (soak times end, deadlines pass).
	active bool
}

// stableRender renders one stable revision, remembering between passes;
// byCluster is this pass's render, made once for every held cluster.
type stableRender struct {
	set       *load.Set
	memo      *incremental.Memo
	err       error
	pass      int
	byCluster map[string][]*unstructured.Unstructured
	previous  *render.Previous
}

// rolloutOutcome is what the rollouts change in one pass: per cluster, the
// objects to record instead of the render's, and the annotation saying
// what waits.
type rolloutOutcome struct {
	objects map[string][]*unstructured.Unstructured
	held    map[string][]string
	active  bool // some rollout is under way: reconcile again soon
}

// digest returns the digest of the objects of objs whose template gov
// maps to policy i ("" when there are none). Each object's line (its key
// and the hash of its JSON) is kept by pointer in seen: objects the memo
// carries over are hashed once.
func (r *rollouts) digest(objs []*unstructured.Unstructured, gov map[string]int, i int, seen map[*unstructured.Unstructured]string) string {
	h := sha256.New()
	n := 0
	for _, o := range objs {
		j, ok := gov[rollout.TemplateOf(o)]
		if !ok || j != i {
			continue
		}
		line, ok := r.digests[o]
		if !ok {
			data, err := json.Marshal(o.Object)
			if err != nil {
				data = []byte(err.Error())
			}
			sum := sha256.Sum256(data)
			line = workv1alpha1.KeyOf(o).String() + " " + hex.EncodeToString(sum[:]) + "\n"
		}
		seen[o] = line
		h.Write([]byte(line))
		n++
	}
	if n == 0 {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// planRollouts runs the rollout planner of each RolloutPolicy and returns
// what it changes in the Works of this pass.
func (c *Controller) planRollouts(ctx context.Context, cur *loaded, res *render.Result, rec *recording, now time.Time) (*rolloutOutcome, error) {
	r := &c.rolls
	r.pass++
	out := &rolloutOutcome{objects: map[string][]*unstructured.Unstructured{}, held: map[string][]string{}}
	policies := rollout.Policies(cur.set)
	if !r.read {
		if err := c.readRollouts(ctx); err != nil {
			if len(policies) > 0 {
				return nil, err // no wave can be planned without what was recorded
			}
			// Nothing to plan: a fleet without RolloutPolicies does not
			// need the record (nor the rights to read it). It is read
			// again on the next pass, before any policy is planned.
			r.states = map[string]*rollout.State{}
		}
	}
	if len(policies) == 0 && len(r.states) == 0 {
		r.active = false
		return out, nil
	}
	before := make([][]*unstructured.Unstructured, 0, len(rec.objects))
	for _, objs := range rec.objects {
		before = append(before, objs)
	}
	gov := rollout.Governed(policies, res.Bindings, before)
	byCluster := map[string][]*unstructured.Unstructured{}
	for _, w := range res.Works {
		byCluster[w.Cluster] = w.Objects
	}
	clusters := res.Clusters
	seen := map[*unstructured.Unstructured]string{}
	states := map[string]*rollout.State{}
	healthCache := map[string]map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult{}
	heldBy := map[string][]int{} // cluster → policies holding it
	plans := make([]rollout.Plan, len(policies))
	runningBy := make([]map[string]string, len(policies))
	for i, ro := range policies {
		name := ro.Display()
		digests, running := map[string]string{}, map[string]string{}
		for _, cl := range clusters {
			if d := r.digest(byCluster[cl.Name], gov, i, seen); d != "" {
				digests[cl.Name] = d
			}
			if d := r.digest(rec.objects[cl.Name], gov, i, seen); d != "" {
				running[cl.Name] = d
			}
		}
		runningBy[i] = running
		prev := r.states[name]
		health := map[string]rollout.Health{}
		if prev != nil {
			var gated []gateCheck
			for cl, g := range prev.Given {
				if g.Failed == "" && (prev.Phase == rollout.Progressing || prev.Phase == rollout.Paused) {
					health[cl] = c.rolloutHealth(ctx, rec, cl, gov, i, healthCache)
					if w := waveOf(ro.Policy, g.Wave); health[cl] == rollout.Healthy && w != nil && w.Gate != nil && w.Gate.Prometheus != nil {
						gated = append(gated, gateCheck{cluster: cl, wave: w})
					}
				}
			}
			for _, g := range c.runGates(ctx, name, gated) {
				health[g.cluster] = rollout.Pending
			}
		}
		pl := rollout.Decide(rollout.Input{Policy: ro.Policy, Name: name, Clusters: clusters, Revision: cur.revision, Control: cur.control,
			Digests: digests, Running: running, Health: health, State: prev, Now: now})
		plans[i] = pl
		states[name] = pl.State
		for cl := range pl.Held {
			heldBy[cl] = append(heldBy[cl], i)
		}
		if ph := pl.State.Phase; ph == rollout.Progressing || ph == rollout.Paused {
			out.active = true
		}
		c.rolloutEvents(pl)
		c.opts.Metrics.Rollout(name, string(pl.State.Phase), pl.State.Wave, rolloutCounts(pl))
	}
	for name := range r.states {
		if states[name] == nil {
			c.opts.Metrics.RolloutGone(name)
		}
	}
	r.digests = seen
	// The held clusters keep the stable revision's objects of the policies
	// holding them (what they run, while none has completed).
	for cl, idx := range heldBy {
		objs := byCluster[cl]
		for _, i := range idx {
			st := plans[i].State
			held := rec.objects[cl]
			// A cluster that runs the stable revision keeps what it
			// runs; only one that must change back (a rollback, a
			// superseded rollout, a placement that moved) gets the stable
			// revision rendered again.
			if st.Stable != "" && st.Stable != cur.revision && runningBy[i][cl] != st.StableTarget[cl] {
				stable, err := c.stableObjects(ctx, cur, st.Stable, rec, cl)
				if err != nil {
					c.log.Error(err, "cannot render the stable revision; the cluster keeps what it runs", logging.KeyCluster, cl, "stable", workv1alpha1.ShortRevision(st.Stable))
				} else {
					held = stable
				}
			}
			objs = swapGoverned(objs, held, gov, i)
			out.held[cl] = append(out.held[cl], fmt.Sprintf("%s: %s %s; runs %s", policies[i].Display(), workv1alpha1.ShortRevision(st.Revision),
				holdReason(st), orWhatItRuns(st.Stable)))
		}
		out.objects[cl] = objs
	}
	doc, err := json.Marshal(rollout.Document{Rollouts: sortedStates(states)})
	if err != nil {
		return nil, err
	}
	r.states, r.active = states, out.active
	note := noteRollouts(policies, plans, cur.revision)
	c.mu.Lock()
	c.rolloutNote = note
	c.mu.Unlock()
	if !bytes.Equal(doc, r.saved) {
		r.pending = doc
	}
	return out, nil
}

// holdReason says why a held cluster does not have the rollout's revision.
func holdReason(st *rollout.State) string {
	switch st.Phase {
	case rollout.RolledBack:
		return "was rolled back: " + st.Reason
	case rollout.Halted:
		return "is halted: " + st.Reason
	case rollout.Paused:
		return "is paused at wave " + st.WaveName
	}
	return "waits for its wave (wave " + st.WaveName + " is open)"
}

func orWhatItRuns(stable string) string {
	if stable == "" {
		return "what it ran before"
	}
	return workv1alpha1.ShortRevision(stable)
}

// swapGoverned returns objs with the objects of policy i's templates
// replaced by those of held, sorted by key as render sorts them.
func swapGoverned(objs, held []*unstructured.Unstructured, gov map[string]int, i int) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if j, ok := gov[rollout.TemplateOf(o)]; !ok || j != i {
			out = append(out, o)
		}
	}
	for _, o := range held {
		if j, ok := gov[rollout.TemplateOf(o)]; ok && j == i {
			out = append(out, o)
		}
	}
	keys := make(map[*unstructured.Unstructured]workv1alpha1.ObjectKey, len(out))
	for _, o := range out {
		keys[o] = workv1alpha1.KeyOf(o)
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return keys[a].Compare(keys[b]) })
	return out
}

// rolloutHealth judges how cluster cl runs policy i's objects of the Work
// recorded for it.
func (c *Controller) rolloutHealth(ctx context.Context, rec *recording, cl string, gov map[string]int, i int,
	cache map[string]map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult) rollout.Health {
	w := rec.work(cl)
	if w == nil {
		return rollout.Pending
	}
	reported, ok := cache[cl]
	if !ok {
		reported = c.templateHealth(ctx, w, rec.objects[cl])
		cache[cl] = reported
	}
	if reported == nil {
		return rollout.Pending // not applied yet, or unreadable
	}
	health := rollout.Healthy
	for _, o := range rec.objects[cl] {
		j, ok := gov[rollout.TemplateOf(o)]
		if !ok || j != i {
			continue
		}
		key, err := workv1alpha1.ParseKey(rollout.TemplateOf(o))
		if err != nil {
			continue
		}
		r, ok := reported[key]
		switch {
		case !ok:
			health = rollout.Pending
		case r.Health == workv1alpha1.HealthFailed || r.Action == workv1alpha1.ActionFailed:
			return rollout.Failing
		case r.Health != workv1alpha1.HealthCurrent:
			health = rollout.Pending
		}
	}
	return health
}

// stableObjects renders revision rev, the last that completed its rollout,
// for cluster cl (remembering the render between passes).
func (c *Controller) stableObjects(ctx context.Context, cur *loaded, rev string, rec *recording, cl string) ([]*unstructured.Unstructured, error) {
	r := &c.rolls
	sr, ok := r.stable[rev]
	if !ok {
		// The placement history is the one of the first render: a
		// history that moves on every pass would have the memo render
		// everything again each time.
		sr = &stableRender{memo: incremental.NewMemo(), previous: rec.previous}
		if snap, err := c.source.ReadRevision(ctx, rev); err != nil {
			sr.err = err
		} else if sr.set, err = load.NewCache().Load(snap.FS, snap.Root); err != nil {
			sr.err = fmt.Errorf("revision %s does not load: %w", workv1alpha1.ShortRevision(rev), err)
		}
		// Only the stable revisions in use are kept.
		r.stable = map[string]*stableRender{rev: sr}
	}
	if sr.err != nil {
		return nil, sr.err
	}
	if sr.byCluster == nil || sr.pass != r.pass {
		res := sr.memo.Render(render.Input{Set: sr.set, Previous: sr.previous, Options: c.opts.Render, Charts: c.charts.For(sr.set)})
		sr.byCluster, sr.pass = make(map[string][]*unstructured.Unstructured, len(res.Works)), r.pass
		for _, w := range res.Works {
			sr.byCluster[w.Cluster] = w.Objects
		}
	}
	return sr.byCluster[cl], nil
}

// readRollouts reads the rollouts the store keeps, once.
func (c *Controller) readRollouts(ctx context.Context) error {
	r := &c.rolls
	r.states = map[string]*rollout.State{}
	rs, ok := c.works.(works.RolloutStates)
	if !ok {
		r.read = true // kept in memory only
		return nil
	}
	data, err := rs.Rollouts(ctx)
	var refused *works.RefusedError
	if errors.As(err, &refused) {
		// Forged (not signed by this controller's key): never planned
		// from. Each rollout starts again from what the clusters run, as
		// with a lost record, and the next save replaces it.
		c.log.Error(err, "the recorded rollouts are refused; each rollout starts again from what the clusters run")
		r.read = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to read the rollouts: %w", err)
	}
	r.read, r.saved = true, data
	if len(data) == 0 {
		return nil
	}
	var doc rollout.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		// Unreadable: start again from what the Works hold, and say so.
		c.log.Error(err, "the recorded rollouts are unreadable; each rollout starts again from what the clusters run")
		return nil
	}
	for _, st := range doc.Rollouts {
		if st != nil && st.Policy != "" {
			r.states[st.Policy] = st
		}
	}
	return nil
}

// saveRollouts writes the rollouts this pass changed, after the Works that
// carry them were recorded. A failed write is logged: the next pass
// writes again.
func (c *Controller) saveRollouts(ctx context.Context) {
	r := &c.rolls
	if r.pending == nil {
		return
	}
	rs, ok := c.works.(works.RolloutStates)
	if !ok {
		r.saved, r.pending = r.pending, nil
		return
	}
	if err := rs.PutRollouts(ctx, r.pending); err != nil {
		c.log.Error(err, "failed to record the rollouts; the next pass writes them again")
		return
	}
	r.saved, r.pending = r.pending, nil
}

// rolloutEvents logs the transitions of a plan and sends each as an Event
// on the Works of the clusters it concerns: the ones it names, else those
// given the revision so far (never the whole fleet: a transition of a
// rollout over a thousand members is not a thousand Events).
func (c *Controller) rolloutEvents(pl rollout.Plan) {
	for _, e := range pl.Events {
		kind := corev1.EventTypeNormal
		if e.Warning {
			kind = corev1.EventTypeWarning
		}
		c.log.Info(e.Message, "reason", e.Reason)
		on := e.Clusters
		if on == nil {
			for cl := range pl.State.Given {
				on = append(on, cl)
			}
			slices.Sort(on)
		}
		for _, cl := range on {
			c.event(cl, kind, e.Reason, e.Message)
		}
	}
}

// rolloutCounts counts a plan's clusters by where they stand.
func rolloutCounts(pl rollout.Plan) map[string]int {
	out := map[string]int{"waiting": len(pl.Held)}
	for _, g := range pl.State.Given {
		switch {
		case g.Failed != "":
			out["failed"]++
		case !g.HealthySince.IsZero():
			out["healthy"]++
		default:
			out["progressing"]++
		}
	}
	return out
}

func sortedStates(states map[string]*rollout.State) []*rollout.State {
	out := make([]*rollout.State, 0, len(states))
	for _, st := range states {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *rollout.State) int { return strings.Compare(a.Policy, b.Policy) })
	return out
}

// rolloutNote is where the rollouts of the revision in force stand, in the
// words of a commit status.
type rolloutNote struct {
	waves, stopped string
}

// noteRollouts describes the plans of the rollouts of revision: "wave 2/3
// (eu) soaking" while under way, why when one stopped.
func noteRollouts(policies []load.Rollout, plans []rollout.Plan, revision string) rolloutNote {
	var waves, stopped []string
	for i, pl := range plans {
		st := pl.State
		if st == nil || st.Revision != revision {
			continue
		}
		total := len(policies[i].Policy.Spec.Waves) + 1
		where := fmt.Sprintf("wave %d/%d (%s)", st.Wave+1, total, st.WaveName)
		switch {
		case st.Phase.Stopped():
			stopped = append(stopped, fmt.Sprintf("rollout %s at %s: %s", strings.ToLower(string(st.Phase)), where, st.Reason))
		case st.Phase == rollout.Paused:
			waves = append(waves, "paused at "+where)
		case st.Phase == rollout.Progressing && !st.SoakingSince.IsZero():
			waves = append(waves, where+" soaking")
		case st.Phase == rollout.Progressing:
			waves = append(waves, where+" rolling out")
		}
	}
	return rolloutNote{waves: strings.Join(waves, "; "), stopped: strings.Join(stopped, "; ")}
}

// waveOf returns the policy's wave named name; nil for the rest wave.
func waveOf(p *rolloutv1alpha1.RolloutPolicy, name string) *rolloutv1alpha1.Wave {
	for i := range p.Spec.Waves {
		if p.Spec.Waves[i].Name == name {
			return &p.Spec.Waves[i]
		}
	}
	return nil
}

// gateCheck is one cluster whose wave has a gate.
type gateCheck struct {
	cluster string
	wave    *rolloutv1alpha1.Wave
	why     string
}

// maxGateQueries bounds the gate queries in flight at once.
const maxGateQueries = 8

// gateBudget bounds all the gate queries of one policy in one pass.
var gateBudget = promgate.Timeout

// runGates runs the gates of checks in parallel, all within one query's
// time limit (a slow Prometheus delays a pass by at most promgate.Timeout,
// however many clusters a wave has), and returns those that do not hold:
// without a Prometheus, on an error, or when the query returns samples.
// Each reason is logged once.
func (c *Controller) runGates(ctx context.Context, policy string, checks []gateCheck) []gateCheck {
	if len(checks) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, gateBudget)
	defer cancel()
	sem := make(chan struct{}, maxGateQueries)
	var wg sync.WaitGroup
	for i := range checks {
		g := &checks[i]
		if c.opts.RolloutGate == nil {
			g.why = "the wave has a Prometheus gate and the controller was given no --rollout-prometheus-url"
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			failing, err := c.opts.RolloutGate.Failing(ctx, promgate.Expand(g.wave.Gate.Prometheus.Query, g.cluster))
			switch {
			case err != nil:
				g.why = err.Error()
			case failing:
				g.why = "the gate's query returns samples"
			}
		})
	}
	wg.Wait()
	if c.rolls.gateWhy == nil {
		c.rolls.gateWhy = map[string]string{}
	}
	var out []gateCheck
	for _, g := range checks {
		key := policy + "/" + g.wave.Name + "/" + g.cluster
		if g.why != "" && c.rolls.gateWhy[key] != g.why {
			c.log.Info("rollout gate does not hold; the cluster counts as not healthy", "policy", policy, "wave", g.wave.Name, logging.KeyCluster, g.cluster, "reason", g.why)
		}
		c.rolls.gateWhy[key] = g.why
		if g.why != "" {
			out = append(out, g)
		}
	}
	return out
}

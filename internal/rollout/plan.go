package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/match"
)

// Phase is where a rollout stands.
type Phase string

const (
	// Progressing: waves are opening.
	Progressing Phase = "Progressing"
	// Paused: spec.paused holds the rollout where it is.
	Paused Phase = "Paused"
	// Complete: every wave is done; the revision is the stable one.
	Complete Phase = "Complete"
	// Halted: a wave failed (or the rollout was aborted with nothing to
	// roll back to); clusters stay where they are.
	Halted Phase = "Halted"
	// RolledBack: a wave failed, or the rollout was aborted, and every
	// cluster runs the last completed revision again.
	RolledBack Phase = "RolledBack"
)

// Stopped reports whether the rollout stopped on a failure or an abort.
func (p Phase) Stopped() bool { return p == Halted || p == RolledBack }

// State is one policy's rollout as the works store keeps it.
type State struct {
	// Policy names the RolloutPolicy (its Display form).
	Policy string `json:"policy"`
	// Revision is the source revision rolled out: the first one whose
	// governed objects are the ones Target records.
	Revision string `json:"revision"`
	// Stable is the last revision that completed its rollout; "" when
	// none has yet (clusters not reached then keep what they run).
	Stable string `json:"stable,omitempty"`
	Phase  Phase  `json:"phase"`
	// Reason says why the rollout stopped, or was aborted.
	Reason string `json:"reason,omitempty"`
	// Started is when the rollout began.
	Started time.Time `json:"started"`
	// Wave is the index of the open wave (the rest wave is
	// len(spec.waves)); WaveOpened when it opened; SoakingSince when every
	// cluster of it was first healthy together (zero while not).
	Wave         int       `json:"wave"`
	WaveName     string    `json:"waveName,omitempty"`
	WaveOpened   time.Time `json:"waveOpened"`
	SoakingSince time.Time `json:"soakingSince,omitzero"`
	// SoakEnds is when the open wave's soak ends, while it soaks.
	SoakEnds time.Time `json:"soakEnds,omitzero"`
	// SkipSoak: the revision's commit asked to skip the soak times.
	SkipSoak bool `json:"skipSoak,omitempty"`
	// Given are the clusters that took the revision.
	Given map[string]*Given `json:"given,omitempty"`
	// Target is, per cluster, the digest of the governed objects the
	// revision renders for it ("" for none): a newer revision that
	// changes one supersedes the rollout.
	Target map[string]string `json:"target,omitempty"`
	// StableTarget is Target of the stable revision: a held cluster that
	// runs it needs nothing rendered again.
	StableTarget map[string]string `json:"stableTarget,omitempty"`
}

// Document is what the works store keeps: every policy's rollout.
type Document struct {
	Rollouts []*State `json:"rollouts"`
}

// Given is a cluster that took the revision.
type Given struct {
	Wave string    `json:"wave"`
	At   time.Time `json:"at"`
	// HealthySince is since when it reports the revision healthy (zero
	// while not); UnhealthySince since when it does not.
	HealthySince   time.Time `json:"healthySince,omitzero"`
	UnhealthySince time.Time `json:"unhealthySince,omitzero"`
	// Failed says why the cluster failed; "" while it has not.
	Failed string `json:"failed,omitempty"`
}

// Health is how a cluster runs the governed objects of the Work it was
// given, as its status reports it.
type Health int

const (
	// Pending: not applied yet, or applied and not yet healthy (or its
	// status is unreadable).
	Pending Health = iota
	// Healthy: applied, and every governed object Current.
	Healthy
	// Failing: the apply failed, or an object reports Failed.
	Failing
)

// Control is what the commit of the revision in force asks of the rollout,
// from its trailers.
type Control struct {
	SkipSoak bool
}

// Input is what one planning pass knows.
type Input struct {
	Policy *rolloutv1alpha1.RolloutPolicy
	// Name is the policy's Display form.
	Name string
	// Clusters are the declared clusters, with their status (Ready).
	Clusters []*clusterv1alpha1.Cluster
	// Revision is the revision in force; Control what its commit asks.
	Revision string
	Control  Control
	// Digests are, per cluster, the digest of the governed objects the
	// revision renders for it (a cluster that gets none is absent or "").
	Digests map[string]string
	// Running are the same digests of what each cluster's recorded Work
	// holds.
	Running map[string]string
	// Health is what each cluster given the revision reports of it.
	Health map[string]Health
	// State is the recorded rollout; nil when there is none.
	State *State
	Now   time.Time
}

// Source is where a cluster's governed objects come from.
type Source int

const (
	// New: the revision in force.
	New Source = iota
	// Held: the last completed revision (State.Stable), or what the
	// cluster runs while none has completed.
	Held
)

// Plan is the outcome of a pass.
type Plan struct {
	// State is the rollout to record.
	State *State
	// Held are the clusters whose governed objects stay at
	// State.Stable (or at what they run when Stable is ""); every other
	// cluster gets the revision in force.
	Held map[string]bool
	// Events are the transitions of this pass, in order.
	Events []Event
}

// Event is a transition of the rollout, for logs, Events and metrics.
type Event struct {
	// Warning marks a failure, a halt or a rollback.
	Warning bool
	Reason  string // WaveOpened, WaveDone, ClusterFailed, Halted, RolledBack, Complete, Superseded, Started
	Message string
	// Clusters are the clusters it concerns; nil for those given the
	// revision.
	Clusters []string
}

// Event reasons.
const (
	EventStarted       = "RolloutStarted"
	EventSuperseded    = "RolloutSuperseded"
	EventWaveOpened    = "RolloutWaveOpened"
	EventWaveDone      = "RolloutWaveDone"
	EventClusterFailed = "RolloutClusterFailed"
	EventHalted        = "RolloutHalted"
	EventRolledBack    = "RolloutRolledBack"
	EventComplete      = "RolloutComplete"
)

// Waves returns the waves' names and, per cluster of clusters, the index of
// its wave: the first whose affinity it matches, len(spec.waves) ("rest")
// for none.
func Waves(p *rolloutv1alpha1.RolloutPolicy, clusters []*clusterv1alpha1.Cluster) (names []string, of map[string]int) {
	for _, w := range p.Spec.Waves {
		names = append(names, w.Name)
	}
	names = append(names, rolloutv1alpha1.RestWave)
	of = map[string]int{}
	for _, cl := range clusters {
		of[cl.Name] = len(p.Spec.Waves)
		for i, w := range p.Spec.Waves {
			if w.ClusterAffinity != nil && match.Cluster(w.ClusterAffinity, cl) {
				of[cl.Name] = i
				break
			}
		}
	}
	return names, of
}

// Decide runs one planning pass.
func Decide(in Input) Plan {
	pl := &planner{in: in, plan: Plan{Held: map[string]bool{}}}
	pl.names, pl.wave = Waves(in.Policy, in.Clusters)
	pl.ready = map[string]bool{}
	for _, cl := range in.Clusters {
		pl.ready[cl.Name] = ready(cl)
	}
	pl.run()
	return pl.plan
}

type planner struct {
	in    Input
	plan  Plan
	names []string
	wave  map[string]int
	ready map[string]bool
	st    *State
}

func (p *planner) event(warning bool, reason, format string, args ...any) {
	p.plan.Events = append(p.plan.Events, Event{Warning: warning, Reason: reason, Message: p.in.Name + ": " + fmt.Sprintf(format, args...)})
}

func (p *planner) run() {
	in := p.in
	prev := in.State
	switch {
	case prev == nil && !changes(in.Digests, in.Running):
		// Nothing to roll out: what runs is the stable revision.
		p.st = &State{Policy: in.Name, Revision: in.Revision, Stable: in.Revision, Phase: Complete, Started: in.Now, Target: clean(in.Digests)}
		p.st.StableTarget = p.st.Target
	case prev == nil:
		p.start("")
	case prev.Revision != in.Revision && !sameTargets(prev.Target, in.Digests):
		stable := prev.Stable
		if prev.Phase == Complete {
			stable = prev.Revision
		}
		if !prev.Phase.Stopped() && prev.Phase != Complete {
			p.event(false, EventSuperseded, "revision %s supersedes the rollout of %s at wave %s; clusters it reached run %s again until their wave opens",
				short(in.Revision), short(prev.Revision), prev.WaveName, orNone(stable))
		}
		stableTarget := prev.StableTarget
		if prev.Phase == Complete {
			stableTarget = prev.Target
		}
		p.start(stable)
		p.st.StableTarget = stableTarget
	default:
		p.st = copyState(prev)
		p.st.Target = clean(in.Digests) // same revision: placement may move (failover)
		if p.st.Phase == Complete {
			p.st.StableTarget = p.st.Target
		}
	}
	st := p.st
	if in.Control.SkipSoak && st.Revision == in.Revision {
		st.SkipSoak = true
	}
	if in.Policy.Spec.Abort && !st.Phase.Stopped() && st.Phase != Complete {
		p.stop(fmt.Sprintf("aborted: spec.abort is true at %s", short(in.Revision)), true)
	}
	switch st.Phase {
	case Complete:
		// Everything gets the revision: a cluster skipped while not Ready
		// catches up now.
	case RolledBack:
		for c := range p.participants() {
			p.plan.Held[c] = true
		}
		for c := range st.Given {
			p.plan.Held[c] = true
		}
	default:
		switch {
		case st.Phase == Halted:
			// Halted stays halted, paused or not: only a new revision
			// starts again.
		case in.Policy.Spec.Paused:
			st.Phase = Paused
		case st.Phase == Paused:
			st.Phase = Progressing
		}
		p.progress()
	}
	p.plan.State = st
}

// start begins a rollout of the revision in force; stable is the last
// completed revision.
func (p *planner) start(stable string) {
	in := p.in
	p.st = &State{Policy: in.Name, Revision: in.Revision, Stable: stable, Phase: Progressing, Started: in.Now,
		Wave: 0, WaveName: p.names[0], WaveOpened: in.Now, Target: clean(in.Digests), Given: map[string]*Given{}}
	p.event(false, EventStarted, "rollout of %s started at wave %s", short(in.Revision), p.names[0])
}

// participants are the clusters the rollout changes and has not given the
// revision to.
func (p *planner) participants() map[string]bool {
	out := map[string]bool{}
	for c := range union(p.in.Digests, p.in.Running) {
		if p.st.Given[c] == nil && p.in.Digests[c] != p.in.Running[c] {
			out[c] = true
		}
	}
	return out
}

// progress judges the given clusters, opens clusters and waves, and stops
// the rollout past a wave's failure budget.
func (p *planner) progress() {
	st, in := p.st, p.in
	if st.Given == nil {
		st.Given = map[string]*Given{}
	}
	p.judge()
	pending := p.participants()
	for c := range pending {
		p.plan.Held[c] = true
	}
	if st.Phase == Halted {
		return
	}
	// A wave already done stops the rollout too when its clusters fail
	// later: a revision that crashes after an hour is as bad.
	for w := range st.Wave {
		if p.overBudget(w, 0) {
			return
		}
	}
	for st.Wave < len(p.names) {
		w := st.Wave
		st.WaveName = p.names[w]
		given, failed, healthy := p.members(w)
		var waiting []string // participants of this wave, Ready
		for c := range pending {
			if p.wave[c] == w && p.ready[c] {
				waiting = append(waiting, c)
			}
		}
		slices.Sort(waiting)
		total := len(given) + len(waiting)
		if p.overBudget(w, len(waiting)) {
			return
		}
		if st.Phase == Paused {
			return
		}
		// Open clusters up to the concurrency limit.
		limit := total
		if w < len(in.Policy.Spec.Waves) {
			limit, _ = rolloutv1alpha1.Scaled(in.Policy.Spec.Waves[w].MaxConcurrent, total, true, total)
			limit = max(limit, 1)
		}
		inFlight := len(given) - len(failed) - len(healthy)
		for _, c := range waiting {
			if inFlight >= limit {
				break
			}
			st.Given[c] = &Given{Wave: st.WaveName, At: in.Now, UnhealthySince: in.Now}
			delete(p.plan.Held, c)
			delete(pending, c)
			given = append(given, c)
			inFlight++
		}
		if len(given) < total || inFlight > 0 {
			st.SoakingSince, st.SoakEnds = time.Time{}, time.Time{}
			return
		}
		// Every cluster of the wave is healthy, or failed within budget.
		soak := time.Duration(0)
		if w < len(in.Policy.Spec.Waves) && !st.SkipSoak {
			soak = in.Policy.Spec.Waves[w].Soak()
		}
		if st.SoakingSince.IsZero() {
			st.SoakingSince = in.Now
		}
		st.SoakEnds = st.SoakingSince.Add(soak)
		if total > 0 && in.Now.Sub(st.SoakingSince) < soak {
			return
		}
		if total > 0 {
			p.event(false, EventWaveDone, "wave %s done: %d clusters healthy for %s", st.WaveName, len(healthy), soak)
		}
		st.Wave++
		st.SoakingSince, st.SoakEnds, st.WaveOpened = time.Time{}, time.Time{}, in.Now
		if st.Wave < len(p.names) {
			st.WaveName = p.names[st.Wave]
			if p.waveSize(st.Wave, pending) > 0 {
				p.event(false, EventWaveOpened, "wave %s opened for %s", st.WaveName, short(st.Revision))
			}
		}
	}
	st.Phase, st.WaveName = Complete, ""
	st.Stable, st.StableTarget = st.Revision, st.Target
	clear(p.plan.Held)
	p.event(false, EventComplete, "rollout of %s complete", short(st.Revision))
}

// members returns the clusters of wave w given the revision, and which of
// them failed and which are healthy. One that turned unreachable still
// counts: the wave waits for it (judge does not fail it meanwhile).
func (p *planner) members(w int) (given, failed, healthy []string) {
	for c, g := range p.st.Given {
		if _, declared := p.wave[c]; !declared || g.Wave != p.names[w] {
			continue // a cluster removed from the fleet waits for nothing
		}
		given = append(given, c)
		switch {
		case g.Failed != "":
			failed = append(failed, c)
		case !g.HealthySince.IsZero():
			healthy = append(healthy, c)
		}
	}
	return given, failed, healthy
}

// overBudget stops the rollout when more clusters of wave w failed than
// its budget allows (of the clusters given the revision and waiting more),
// and reports whether it did.
func (p *planner) overBudget(w, waiting int) bool {
	given, failed, _ := p.members(w)
	total := len(given) + waiting
	budget, _ := rolloutv1alpha1.Scaled(p.in.Policy.Spec.MaxFailures, total, false, 0)
	if len(failed) <= budget {
		return false
	}
	slices.Sort(failed)
	var why []string
	for _, c := range failed {
		why = append(why, c+": "+p.st.Given[c].Failed)
	}
	p.stop(fmt.Sprintf("wave %s: %d of %d clusters failed, %d allowed (%s)", p.names[w], len(failed), total, budget, strings.Join(why, "; ")), false)
	return true
}

// waveSize counts the clusters of wave w that are pending.
func (p *planner) waveSize(w int, pending map[string]bool) int {
	n := 0
	for c := range pending {
		if p.wave[c] == w {
			n++
		}
	}
	return n
}

// judge updates the health record of every cluster given the revision and
// marks the ones past the progress deadline, or failing, as failed.
func (p *planner) judge() {
	st, in := p.st, p.in
	deadline := in.Policy.Spec.Deadline()
	for _, c := range slices.Sorted(maps.Keys(st.Given)) {
		g := st.Given[c]
		if g.Failed != "" {
			continue
		}
		h := in.Health[c]
		if !p.ready[c] && h != Healthy {
			// An unreachable cluster cannot say; its deadline starts
			// again when it is back.
			g.HealthySince, g.UnhealthySince = time.Time{}, in.Now
			continue
		}
		switch {
		case h == Healthy:
			if g.HealthySince.IsZero() {
				g.HealthySince = in.Now
			}
			g.UnhealthySince = time.Time{}
			continue
		case !g.HealthySince.IsZero() || g.UnhealthySince.IsZero():
			g.HealthySince, g.UnhealthySince = time.Time{}, in.Now
		}
		switch {
		case h == Failing:
			g.Failed = "reports the revision failed"
		case in.Now.Sub(g.UnhealthySince) >= deadline:
			g.Failed = fmt.Sprintf("not healthy within the progress deadline (%s)", deadline)
		default:
			continue
		}
		p.event(true, EventClusterFailed, "cluster %s failed in wave %s: %s", c, g.Wave, g.Failed)
		p.plan.Events[len(p.plan.Events)-1].Clusters = []string{c}
	}
}

// stop ends the rollout on a failure (or an abort): Rollback, or an abort,
// gives every cluster the stable revision again when there is one.
func (p *planner) stop(reason string, abort bool) {
	st := p.st
	st.Reason = reason
	back := abort || p.in.Policy.Spec.Action() == rolloutv1alpha1.Rollback
	if back && st.Stable == "" {
		st.Phase = Halted
		st.Reason += "; nothing to roll back to: no revision has completed its rollout yet"
		p.event(true, EventHalted, "rollout of %s halted: %s", short(st.Revision), st.Reason)
		return
	}
	if !back {
		st.Phase = Halted
		p.event(true, EventHalted, "rollout of %s halted: %s; later waves keep %s", short(st.Revision), reason, orNone(st.Stable))
		return
	}
	st.Phase = RolledBack
	for c := range st.Given {
		p.plan.Held[c] = true
	}
	p.event(true, EventRolledBack, "rollout of %s rolled back to %s: %s", short(st.Revision), short(st.Stable), reason)
}

// ready reports whether a cluster is Ready (one without status counts as
// Ready, as in scheduling).
func ready(cl *clusterv1alpha1.Cluster) bool {
	if cl.Status == nil {
		return true
	}
	c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// changes reports whether some cluster would run other governed objects.
func changes(digests, running map[string]string) bool {
	for c := range union(digests, running) {
		if digests[c] != running[c] {
			return true
		}
	}
	return false
}

// sameTargets reports whether two digest maps name the same objects for
// every cluster.
func sameTargets(a, b map[string]string) bool {
	for c := range union(a, b) {
		if a[c] != b[c] {
			return false
		}
	}
	return true
}

func union(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for c := range a {
		out[c] = true
	}
	for c := range b {
		out[c] = true
	}
	return out
}

// clean drops empty digests, so a cluster that gets nothing and one that
// is absent compare equal.
func clean(d map[string]string) map[string]string {
	out := make(map[string]string, len(d))
	for c, v := range d {
		if v != "" {
			out[c] = v
		}
	}
	return out
}

func copyState(s *State) *State {
	out := *s
	out.Given = make(map[string]*Given, len(s.Given))
	for c, g := range s.Given {
		gc := *g
		out.Given[c] = &gc
	}
	out.Target = maps.Clone(s.Target)
	out.StableTarget = maps.Clone(s.StableTarget)
	return &out
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orNone(rev string) string {
	if rev == "" {
		return "what they ran"
	}
	return short(rev)
}

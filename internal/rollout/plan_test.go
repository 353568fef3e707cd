package rollout

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// fleet: canary (c1), eu (e1, e2 by label), rest (r1).
func clusters(notReady ...string) []*clusterv1alpha1.Cluster {
	mk := func(name string, labels map[string]string) *clusterv1alpha1.Cluster {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		st := metav1.ConditionTrue
		if slices.Contains(notReady, name) {
			st = metav1.ConditionFalse
		}
		cl.Status = &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: st}}}
		return cl
	}
	return []*clusterv1alpha1.Cluster{mk("c1", nil), mk("e1", map[string]string{"region": "eu"}), mk("e2", map[string]string{"region": "eu"}), mk("r1", nil)}
}

func policy(mut ...func(*rolloutv1alpha1.Spec)) *rolloutv1alpha1.RolloutPolicy {
	p := &rolloutv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: rolloutv1alpha1.Spec{
		Waves: []rolloutv1alpha1.Wave{
			{Name: "canary", ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"c1"}}, SoakTime: &metav1.Duration{Duration: 5 * time.Minute}},
			{Name: "eu", ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}},
				SoakTime: &metav1.Duration{Duration: 5 * time.Minute}},
		},
		ProgressDeadline: &metav1.Duration{Duration: 10 * time.Minute},
	}}
	for _, m := range mut {
		m(&p.Spec)
	}
	return p
}

// sim drives Decide as the controller does: it records what each cluster
// runs (the revision's digest when given, the stable one when held) and
// keeps the State between passes, through JSON as the store does.
type sim struct {
	t        *testing.T
	policy   *rolloutv1alpha1.RolloutPolicy
	clusters []*clusterv1alpha1.Cluster
	running  map[string]string
	stable   map[string]string // the stable revision's digests
	health   map[string]Health
	state    *State
	now      time.Time
	control  Control
	events   []Event
	last     Plan
}

func newSim(t *testing.T, p *rolloutv1alpha1.RolloutPolicy, v string) *sim {
	s := &sim{t: t, policy: p, clusters: clusters(), running: all(v), stable: all(v), health: map[string]Health{}, now: t0}
	s.pass("r0", all(v))
	if s.state.Phase != Complete || s.state.Stable != "r0" {
		t.Fatalf("first pass with nothing to roll out: phase %s stable %q, want Complete r0", s.state.Phase, s.state.Stable)
	}
	return s
}

func all(v string) map[string]string {
	return map[string]string{"c1": v, "e1": v, "e2": v, "r1": v}
}

// pass runs one planning pass for revision rev rendering digests, then
// "records" the Works.
func (s *sim) pass(rev string, digests map[string]string) Plan {
	s.t.Helper()
	var st *State
	if s.state != nil {
		data, err := json.Marshal(s.state)
		if err != nil {
			s.t.Fatal(err)
		}
		st = &State{}
		if err := json.Unmarshal(data, st); err != nil {
			s.t.Fatal(err)
		}
	}
	pl := Decide(Input{Policy: s.policy, Name: "RolloutPolicy.propagit.io/web", Clusters: s.clusters, Revision: rev, Control: s.control,
		Digests: digests, Running: maps.Clone(s.running), Health: maps.Clone(s.health), State: st, Now: s.now})
	if pl.State.Phase == Complete {
		s.stable = maps.Clone(digests)
	}
	for c := range union(digests, s.running) {
		if pl.Held[c] {
			if pl.State.Stable != "" {
				s.running[c] = s.stable[c]
			}
			continue
		}
		s.running[c] = digests[c]
	}
	s.state, s.last = pl.State, pl
	s.events = append(s.events, pl.Events...)
	return pl
}

func (s *sim) given() []string {
	var out []string
	for c := range s.state.Given {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

func (s *sim) healthy(cs ...string) {
	for _, c := range cs {
		s.health[c] = Healthy
	}
}

func (s *sim) expect(phase Phase, wave string, running map[string]string) {
	s.t.Helper()
	if s.state.Phase != phase || s.state.WaveName != wave {
		s.t.Fatalf("phase %s wave %q, want %s %q (reason %q)", s.state.Phase, s.state.WaveName, phase, wave, s.state.Reason)
	}
	for c, v := range running {
		if s.running[c] != v {
			s.t.Fatalf("cluster %s runs %q, want %q (all: %v)", c, s.running[c], v, s.running)
		}
	}
}

func (s *sim) hasEvent(reason, contains string) {
	s.t.Helper()
	for _, e := range s.events {
		if e.Reason == reason && strings.Contains(e.Message, contains) {
			return
		}
	}
	s.t.Fatalf("no %s event containing %q in %+v", reason, contains, s.events)
}

func TestRolloutPlannerWavesInOrder(t *testing.T) {
	s := newSim(t, policy(), "v1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "canary", map[string]string{"c1": "v2", "e1": "v1", "e2": "v1", "r1": "v1"})
	s.now = s.now.Add(time.Minute)
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "canary", map[string]string{"e1": "v1"}) // soaking
	if !s.state.SoakingSince.Equal(s.now) {
		t.Fatalf("soak started %v, want %v", s.state.SoakingSince, s.now)
	}
	s.now = s.now.Add(4 * time.Minute)
	s.pass("r1", all("v2"))
	s.expect(Progressing, "canary", map[string]string{"e1": "v1"}) // 4m of 5m
	s.now = s.now.Add(time.Minute)
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e1": "v2", "e2": "v2", "r1": "v1"})
	s.healthy("e1", "e2")
	s.now = s.now.Add(time.Minute)
	s.pass("r1", all("v2"))
	s.now = s.now.Add(5 * time.Minute)
	s.pass("r1", all("v2"))
	s.expect(Progressing, "rest", map[string]string{"r1": "v2"})
	s.healthy("r1")
	s.pass("r1", all("v2"))
	s.expect(Complete, "", all("v2"))
	if s.state.Stable != "r1" {
		t.Fatalf("stable %q after completing, want r1", s.state.Stable)
	}
	s.hasEvent(EventWaveDone, "wave canary done")
	s.hasEvent(EventComplete, "rollout of r1 complete")
	if s.state.StableTarget["e1"] != "v2" {
		t.Fatalf("stable target %v after completing, want the revision's", s.state.StableTarget)
	}
	// The next rollout keeps what the stable revision renders, so a held
	// cluster that runs it needs nothing rendered again.
	s.pass("r2", all("v3"))
	if s.state.StableTarget["e1"] != "v2" || s.state.Target["e1"] != "v3" {
		t.Fatalf("next rollout: stable target %v, target %v", s.state.StableTarget, s.state.Target)
	}
}

func TestRolloutPlannerConcurrency(t *testing.T) {
	s := newSim(t, policy(func(sp *rolloutv1alpha1.Spec) {
		one := intstr.FromInt32(1)
		sp.Waves[1].MaxConcurrent = &one
		sp.Waves[0].SoakTime, sp.Waves[1].SoakTime = nil, nil
	}), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e1": "v2", "e2": "v1"})
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e2": "v1"}) // e1 not healthy yet: one at a time
	s.healthy("e1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e2": "v2", "r1": "v1"})
}

func TestRolloutPlannerHaltKeepsLaterWaves(t *testing.T) {
	s := newSim(t, policy(), "v1")
	s.pass("r1", all("bad"))
	s.now = s.now.Add(9 * time.Minute)
	s.pass("r1", all("bad"))
	s.expect(Progressing, "canary", nil)
	s.now = s.now.Add(time.Minute)
	s.pass("r1", all("bad"))
	s.expect(Halted, "canary", map[string]string{"c1": "bad", "e1": "v1", "e2": "v1", "r1": "v1"})
	if !strings.Contains(s.state.Reason, "c1: not healthy within the progress deadline (10m0s)") {
		t.Fatalf("reason %q does not name the cluster and the deadline", s.state.Reason)
	}
	s.hasEvent(EventHalted, "halted")
	for _, e := range s.events {
		if e.Reason == EventClusterFailed && (len(e.Clusters) != 1 || e.Clusters[0] != "c1") {
			t.Fatalf("the failure event concerns %v, want [c1]", e.Clusters)
		}
	}
	// It stays halted, even when c1 turns healthy later, and through a
	// pause and its end.
	s.healthy("c1")
	s.now = s.now.Add(time.Hour)
	s.pass("r1", all("bad"))
	s.expect(Halted, "canary", map[string]string{"e1": "v1"})
	s.policy.Spec.Paused = true
	s.pass("r1", all("bad"))
	s.expect(Halted, "canary", map[string]string{"e1": "v1"})
	s.policy.Spec.Paused = false
	s.pass("r1", all("bad"))
	s.expect(Halted, "canary", map[string]string{"e1": "v1"})
	halts := 0
	for _, e := range s.events {
		if e.Reason == EventHalted {
			halts++
		}
	}
	if halts != 1 {
		t.Fatalf("%d halt events, want 1: a halted rollout was taken up again", halts)
	}
}

func TestRolloutPlannerRollback(t *testing.T) {
	s := newSim(t, policy(func(sp *rolloutv1alpha1.Spec) { sp.OnFailure = rolloutv1alpha1.Rollback }), "v1")
	s.pass("r1", all("bad"))
	s.health["c1"] = Failing
	s.pass("r1", all("bad"))
	s.expect(RolledBack, "canary", all("v1"))
	s.hasEvent(EventRolledBack, "rolled back to r0")
	// A later commit that does not touch the governed templates leaves it
	// rolled back; one that does starts again from the first wave.
	s.pass("r2", all("bad"))
	s.expect(RolledBack, "canary", all("v1"))
	s.pass("r3", all("fixed"))
	s.expect(Progressing, "canary", map[string]string{"c1": "fixed", "e1": "v1"})
	if s.state.Stable != "r0" {
		t.Fatalf("stable %q, want r0", s.state.Stable)
	}
}

func TestRolloutPlannerRollbackWithoutStableHalts(t *testing.T) {
	p := policy(func(sp *rolloutv1alpha1.Spec) { sp.OnFailure = rolloutv1alpha1.Rollback })
	s := &sim{t: t, policy: p, clusters: clusters(), running: all("v1"), stable: all("v1"), health: map[string]Health{}, now: t0}
	s.pass("r1", all("v2")) // no recorded rollout, and it changes things
	s.expect(Progressing, "canary", map[string]string{"c1": "v2", "e1": "v1"})
	s.health["c1"] = Failing
	s.pass("r1", all("v2"))
	s.expect(Halted, "canary", map[string]string{"c1": "v2"})
	if !strings.Contains(s.state.Reason, "nothing to roll back to") {
		t.Fatalf("reason %q", s.state.Reason)
	}
}

func TestRolloutPlannerFailureBudget(t *testing.T) {
	s := newSim(t, policy(func(sp *rolloutv1alpha1.Spec) {
		one := intstr.FromInt32(1)
		sp.MaxFailures = &one
		sp.Waves[0].SoakTime, sp.Waves[1].SoakTime = nil, nil
	}), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", nil)
	s.health["e1"], s.health["e2"] = Failing, Healthy
	s.pass("r1", all("v2"))
	s.expect(Progressing, "rest", map[string]string{"r1": "v2"}) // one failure allowed
	s.health["e2"] = Failing
	s.pass("r1", all("v2"))
	s.expect(Halted, "rest", nil) // a done wave failing later stops the rollout
	if !strings.Contains(s.state.Reason, "wave eu: 2 of 2 clusters failed, 1 allowed") {
		t.Fatalf("reason %q", s.state.Reason)
	}
}

func TestRolloutPlannerSupersede(t *testing.T) {
	s := newSim(t, policy(func(sp *rolloutv1alpha1.Spec) { sp.Waves[0].SoakTime = nil }), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"c1": "v2", "e1": "v2", "e2": "v2", "r1": "v1"})
	// r2 changes the governed objects again: it starts at the canary, and
	// the eu clusters r1 reached run the stable revision again.
	delete(s.health, "c1")
	s.pass("r2", all("v3"))
	s.expect(Progressing, "canary", map[string]string{"c1": "v3", "e1": "v1", "e2": "v1", "r1": "v1"})
	s.hasEvent(EventSuperseded, "supersedes the rollout of r1 at wave eu")
	if s.state.Stable != "r0" || s.state.Revision != "r2" {
		t.Fatalf("stable %q revision %q, want r0 r2", s.state.Stable, s.state.Revision)
	}
	// A commit that changes no governed object does not supersede.
	s.pass("r3", all("v3"))
	if s.state.Revision != "r2" {
		t.Fatalf("an unrelated commit restarted the rollout: revision %q", s.state.Revision)
	}
}

func TestRolloutPlannerOnlyChangedClustersTakePart(t *testing.T) {
	s := newSim(t, policy(), "v1")
	next := all("v1")
	next["e1"] = "v2" // an override for e1 only
	s.pass("r1", next)
	// The canary has nothing to take: its wave is skipped, eu opens.
	s.expect(Progressing, "eu", map[string]string{"e1": "v2"})
	s.healthy("e1")
	s.pass("r1", next)
	s.now = s.now.Add(5 * time.Minute)
	s.pass("r1", next)
	s.expect(Complete, "", next)
}

func TestRolloutPlannerUnreachableClusterIsSkipped(t *testing.T) {
	s := newSim(t, policy(func(sp *rolloutv1alpha1.Spec) { sp.Waves[0].SoakTime, sp.Waves[1].SoakTime = nil, nil }), "v1")
	s.clusters = clusters("e2")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e1": "v2", "e2": "v1"})
	s.healthy("e1")
	s.pass("r1", all("v2"))
	s.expect(Progressing, "rest", map[string]string{"e2": "v1", "r1": "v2"})
	s.healthy("r1")
	s.pass("r1", all("v2"))
	// Complete: e2 takes the revision when it is back, with nothing to wait for.
	s.expect(Complete, "", map[string]string{"e2": "v2"})
	// A given cluster that turns unreachable does not fail its wave.
	s2 := newSim(t, policy(), "v1")
	s2.pass("r1", all("v2"))
	s2.clusters = clusters("c1")
	s2.now = s2.now.Add(time.Hour)
	s2.pass("r1", all("v2"))
	s2.expect(Progressing, "canary", nil)
}

func TestRolloutPlannerPauseAndSkipSoak(t *testing.T) {
	s := newSim(t, policy(), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.policy.Spec.Paused = true
	s.now = s.now.Add(time.Hour)
	s.pass("r1", all("v2"))
	s.pass("r1", all("v2"))
	s.expect(Paused, "canary", map[string]string{"e1": "v1"})
	s.policy.Spec.Paused = false
	s.pass("r1", all("v2"))
	s.expect(Progressing, "canary", nil)
	s.now = s.now.Add(5 * time.Minute)
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"e1": "v2"})

	u := newSim(t, policy(), "v1")
	u.control = Control{SkipSoak: true}
	u.pass("r1", all("hotfix"))
	u.healthy("c1", "e1", "e2", "r1")
	u.pass("r1", all("hotfix"))
	u.pass("r1", all("hotfix"))
	u.pass("r1", all("hotfix"))
	u.expect(Complete, "", all("hotfix")) // no soak waited, health still was
}

func TestRolloutPlannerAbort(t *testing.T) {
	s := newSim(t, policy(), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.pass("r1", all("v2"))
	s.policy.Spec.Abort = true
	s.pass("r2", all("v2")) // a commit setting spec.abort
	s.expect(RolledBack, "canary", all("v1"))
	if !strings.Contains(s.state.Reason, "aborted: spec.abort is true at r2") {
		t.Fatalf("reason %q", s.state.Reason)
	}
	// While abort is true a new rollout is rolled back at once.
	s.pass("r3", all("v3"))
	s.expect(RolledBack, "canary", all("v1"))
	// Cleared, the next change rolls out again.
	s.policy.Spec.Abort = false
	s.pass("r4", all("v4"))
	s.expect(Progressing, "canary", map[string]string{"c1": "v4", "e1": "v1"})
}

func TestRolloutPlannerRestartResumes(t *testing.T) {
	// The state goes through JSON on every pass (sim.pass), as the works
	// store keeps it: a pass after a restart is a pass like any other.
	s := newSim(t, policy(), "v1")
	s.pass("r1", all("v2"))
	s.healthy("c1")
	s.now = s.now.Add(time.Minute)
	s.pass("r1", all("v2"))
	soak := s.state.SoakingSince
	s.now = s.now.Add(5 * time.Minute)
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", nil)
	if !soak.Equal(t0.Add(time.Minute)) {
		t.Fatalf("soak start %v lost through the record", soak)
	}
}

func TestRolloutPlannerFailoverPlacementFlows(t *testing.T) {
	s := newSim(t, policy(), "v1")
	// At the same revision a template moves from r1 to e1 (failover): no
	// rollout starts, the new placement is given at once.
	moved := all("v1")
	moved["r1"], moved["e1"] = "", "v1+moved"
	s.pass("r0", moved)
	s.expect(Complete, "", moved)
}

func TestRolloutParseControl(t *testing.T) {
	c, unknown := ParseControl("fix: image\n\nbody quoting Propagit-Rollout: skip-soak\n\nPropagit-Rollout: abort\nPropagit-Rollout: later\n")
	if c.SkipSoak || len(unknown) != 2 || unknown[0] != "abort" {
		t.Fatalf("got %+v unknown %v: only the trailer block counts, and abort is no trailer", c, unknown)
	}
	if c, _ := ParseControl("fix\n\nPropagit-Rollout: skip-soak"); !c.SkipSoak {
		t.Fatal("skip-soak in the trailer block not read")
	}
	if c, _ := ParseControl("subject only Propagit-Rollout: skip-soak"); c.SkipSoak {
		t.Fatal("a subject line is no trailer")
	}
}

// A controller that kept no state (one repository per member keeps it in
// memory) restarts mid-rollout: the clusters already on the revision keep
// it, the rollout starts again at the first wave that has clusters to
// change, and, with no completed revision known, a failure halts it.
func TestRolloutPlannerRestartWithoutState(t *testing.T) {
	p := policy(func(sp *rolloutv1alpha1.Spec) { sp.OnFailure = rolloutv1alpha1.Rollback })
	running := all("v1")
	running["c1"] = "v2" // the canary took v2 before the restart
	s := &sim{t: t, policy: p, clusters: clusters(), running: running, stable: all("v1"), health: map[string]Health{}, now: t0}
	s.pass("r1", all("v2"))
	s.expect(Progressing, "eu", map[string]string{"c1": "v2", "e1": "v2", "e2": "v2", "r1": "v1"})
	s.health["e1"] = Failing
	s.pass("r1", all("v2"))
	s.expect(Halted, "eu", map[string]string{"e1": "v2", "r1": "v1"})
	if !strings.Contains(s.state.Reason, "nothing to roll back to") {
		t.Fatalf("reason %q", s.state.Reason)
	}
}

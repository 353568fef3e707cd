package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/testenv"
)

// fault is one kind of failure with its weight in the draw.
type fault struct {
	kind   string
	weight int
	inject func(f *injector, until time.Time)
}

// faults are drawn by weight. Each picks its target and timings from the
// injector's seeded source before it starts, so a seed replays the same
// schedule.
var faults = []fault{
	{"member-kill", 2, (*injector).memberKill},
	{"hub-kill", 1, (*injector).hubKill},
	{"git-stall", 2, (*injector).gitStall},
	{"git-drop", 2, (*injector).gitDrop},
	{"git-slow", 1, (*injector).gitSlow},
	{"replica-kill", 2, (*injector).replicaKill},
	{"bad-commit", 2, (*injector).badCommit},
	{"drift", 3, (*injector).drift},
	{"agent-restart", 1, (*injector).agentRestart},
	{"webhook-flood", 1, (*injector).webhookFlood},
}

// injector overlaps faults until a deadline, logging each.
type injector struct {
	t        testing.TB
	rng      *rand.Rand
	ev       *eventLog
	obs      *observer
	com      *committer
	members  []*testenv.Member // the fleet's members
	hub      *testenv.Member
	proxy    *gitProxy
	replicas []*proc
	agent    *proc
	mode     string

	mu     sync.Mutex
	busy   map[string]bool
	counts map[string]int
	drifts int
	// driftFixes are the times from a drift edit to its correction.
	driftFixes []time.Duration
	wg         sync.WaitGroup
}

// run draws a fault every 1–5 s until until, then waits for the running
// ones to end (none holds past until). Faults overlap: many hold for
// longer than that. (A restart of an apiserver takes a core for 10–30 s
// on a loaded 2-core machine; more often and the soak measures only the
// machine.)
func (f *injector) run(ctx context.Context, until time.Time) {
	total := 0
	for _, k := range faults {
		total += k.weight
	}
	for {
		wait := time.Duration(1000+f.rng.IntN(4000)) * time.Millisecond
		if time.Now().Add(wait).After(until) {
			break
		}
		select {
		case <-ctx.Done():
			f.wg.Wait()
			return
		case <-time.After(wait):
		}
		n := f.rng.IntN(total)
		for _, k := range faults {
			if n -= k.weight; n < 0 {
				k.inject(f, until)
				break
			}
		}
	}
	f.wg.Wait()
}

// claim marks target busy; false if a fault already holds it.
func (f *injector) claim(target, kind string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[target] {
		f.ev.add("fault", "%s skipped: %s is busy", kind, target)
		return false
	}
	f.busy[target] = true
	f.counts[kind]++
	return true
}

func (f *injector) free(target string) {
	f.mu.Lock()
	delete(f.busy, target)
	f.mu.Unlock()
}

// hold draws a duration in [lo, hi) ending no later than until.
func (f *injector) hold(lo, hi time.Duration, until time.Time) time.Duration {
	d := lo + time.Duration(f.rng.Int64N(int64(hi-lo)))
	if left := time.Until(until); d > left {
		d = max(left, 0)
	}
	return d
}

// during runs begin, waits d, then runs end, in the background, with
// target claimed throughout.
func (f *injector) during(target, kind string, d time.Duration, begin, end func() error) {
	if !f.claim(target, kind) {
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.free(target)
		f.ev.add("fault", "%s %s for %s", kind, target, d.Round(time.Millisecond))
		if err := begin(); err != nil {
			f.t.Errorf("fault %s on %s failed to begin: %v", kind, target, err)
			return
		}
		time.Sleep(d)
		if err := end(); err != nil {
			f.t.Errorf("fault %s on %s failed to end: %v", kind, target, err)
			return
		}
		f.ev.add("fault", "%s %s over", kind, target)
	}()
}

func (f *injector) memberKill(until time.Time) {
	m := f.members[f.rng.IntN(len(f.members))]
	f.during(m.Name, "member-kill", f.hold(time.Second, 8*time.Second, until), m.KillAPIServer, m.StartAPIServer)
}

// hubKill stops the hub past the renew deadline: every replica loses
// every Lease, and the members are handed over again once it is back.
func (f *injector) hubKill(until time.Time) {
	f.during(f.hub.Name, "hub-kill", f.hold(renewDeadline, 8*time.Second, until), f.hub.KillAPIServer, f.hub.StartAPIServer)
}

func (f *injector) gitStall(until time.Time) {
	f.during("git-stall", "git-stall", f.hold(time.Second, 6*time.Second, until),
		func() error { f.proxy.stall(); return nil }, func() error { f.proxy.resume(); return nil })
}

func (f *injector) gitDrop(time.Time) {
	f.mu.Lock()
	f.counts["git-drop"]++
	f.mu.Unlock()
	f.ev.add("fault", "git-drop closed %d sockets", f.proxy.drop())
}

func (f *injector) gitSlow(until time.Time) {
	delay := time.Duration(50+f.rng.IntN(250)) * time.Millisecond
	f.during("git-slow", "git-slow", f.hold(3*time.Second, 10*time.Second, until),
		func() error { f.proxy.setDelay(delay); return nil }, func() error { f.proxy.setDelay(0); return nil })
}

// replicaKill sends SIGKILL to a killable replica holding a push member's
// Lease (mid-apply or not; any killable one when none holds one or the
// hub cannot say) and starts it again later with the same cache.
func (f *injector) replicaKill(until time.Time) {
	var killable, holders []*proc
	for _, p := range f.replicas {
		if p.killable {
			killable = append(killable, p)
		}
	}
	// Every draw is made whatever the hub says, so a seed replays.
	any, pick := f.rng.IntN(len(killable)), f.rng.IntN(2)
	d := f.hold(2*leaseDuration, 4*leaseDuration, until)
	for _, m := range f.members[:2] {
		if h := f.holder(m.Name); h != nil && h.killable && !slices.Contains(holders, h) {
			holders = append(holders, h)
		}
	}
	p := killable[any]
	if len(holders) > 0 {
		p = holders[pick%len(holders)]
	}
	// Down for two to four lease durations, so its members are handed
	// over (a replica back within one takes its own Leases back).
	f.during(p.name, "replica-kill", d, func() error { p.kill(); return nil }, p.start)
}

// holder returns the replica holding member's Lease on the hub (the
// leader's in leader mode), or nil.
func (f *injector) holder(member string) *proc {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lease := shard.MemberKey(member)
	if f.mode == modeLeader {
		lease = leaderLease
	}
	l, err := f.hub.Client().CoordinationV1().Leases(hubNamespace).Get(ctx, lease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return nil
	}
	id := *l.Spec.HolderIdentity
	for _, p := range f.replicas {
		// A shard's identity is its name; a leader's is <host>_<pid>.
		if pid, _ := p.pid(); p.name == id || pid != 0 && strings.HasSuffix(id, fmt.Sprintf("_%d", pid)) {
			return p
		}
	}
	return nil
}

// agentRestart kills the pull agent and starts it on its stale cache.
func (f *injector) agentRestart(until time.Time) {
	p := f.agent
	f.during(p.name, "agent-restart", f.hold(0, 3*time.Second, until),
		func() error { p.kill(); return nil }, p.start)
}

// webhookFlood floods a replica's /hooks/git, mostly with a wrong token,
// for 2–5 s.
func (f *injector) webhookFlood(until time.Time) {
	p := f.replicas[f.rng.IntN(len(f.replicas))]
	d := f.hold(2*time.Second, 5*time.Second, until)
	target := "flood-" + p.name
	if !f.claim(target, "webhook-flood") {
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.free(target)
		f.ev.add("fault", "webhook-flood %s for %s", p.name, d.Round(time.Millisecond))
		f.ev.add("fault", "webhook-flood %s over: answers %s", p.name, codesString(flood(p, d)))
	}()
}

// badCommit pushes a bad commit; the committer fixes it after the hold.
func (f *injector) badCommit(until time.Time) {
	kind := badKinds[f.rng.IntN(len(badKinds))]
	d := f.hold(2*time.Second, 8*time.Second, until)
	f.during("committer", "bad-commit", d,
		func() error { return f.com.badCommit(kind, d) }, func() error { return nil })
}

// drift changes a propagated ConfigMap's value on a member directly, as
// someone with kubectl would, and times how long propagit takes to put it
// back (the checker may miss a quick revert between two of its lists).
func (f *injector) drift(until time.Time) {
	m := f.members[f.rng.IntN(len(f.members))]
	tp := templates()[f.rng.IntN(templateCount)]
	f.mu.Lock()
	f.drifts++
	value := fmt.Sprintf("drift-%d", f.drifts)
	f.counts["drift"]++
	f.mu.Unlock()
	f.obs.noteDrift(value)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		cms := m.Client().CoreV1().ConfigMaps(tp.ns)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		patch := fmt.Appendf(nil, `{"data":{"value":%q}}`, value)
		if _, err := cms.Patch(ctx, tp.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			f.ev.add("fault", "drift %s %s := %s failed: %v", m.Name, tp.key(), value, err)
			return
		}
		edited := time.Now()
		f.ev.add("fault", "drift %s %s := %s", m.Name, tp.key(), value)
		for time.Now().Before(until) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			cm, err := cms.Get(ctx, tp.name, metav1.GetOptions{})
			cancel()
			if err == nil && cm.Data["value"] != value {
				f.mu.Lock()
				f.driftFixes = append(f.driftFixes, time.Since(edited))
				f.mu.Unlock()
				f.ev.add("drift", "%s %s put back to %s after %s", m.Name, tp.key(), cm.Data["value"], time.Since(edited).Round(time.Millisecond))
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

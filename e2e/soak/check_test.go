package soak

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/testenv"
)

// convergeBound is how long after the faults stop every member must hold
// the newest good revision's values.
const convergeBound = 90 * time.Second

// seenObject is what the checker last saw of a template on a member.
type seenObject struct {
	uid   string
	value string
	max   int // highest commit sequence seen, drift aside
}

// observer is the checker: it lists the templates on every member twice a
// second and checks nothing lost, never backwards, no bad value, and, once
// the faults have stopped, convergence. It also times commit → applied.
type observer struct {
	t       testing.TB
	ev      *eventLog
	com     *committer
	members []*testenv.Member

	mu          sync.Mutex
	seen        map[string]map[string]*seenObject // member → template key → object
	drifts      map[string]bool                   // drift values the injector wrote
	applied     map[string]map[int]bool           // member → good seq seen applied
	latencies   []time.Duration
	checks      map[string]int
	violations  map[string]int
	reported    map[string]bool
	stoppedAt   time.Time // when the faults stopped; zero while they run
	convergedAt time.Time
	unreachable int
}

func newObserver(t testing.TB, ev *eventLog, com *committer, members []*testenv.Member) *observer {
	o := &observer{t: t, ev: ev, com: com, members: members,
		seen: map[string]map[string]*seenObject{}, drifts: map[string]bool{},
		applied: map[string]map[int]bool{}, checks: map[string]int{},
		violations: map[string]int{}, reported: map[string]bool{}}
	for _, m := range members {
		o.seen[m.Name] = map[string]*seenObject{}
		o.applied[m.Name] = map[int]bool{}
	}
	return o
}

// violate records a violation of invariant; the first one per key fails
// the test with the events around it.
func (o *observer) violate(invariant, key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.mu.Lock()
	o.violations[invariant]++
	first := !o.reported[invariant+"|"+key]
	o.reported[invariant+"|"+key] = true
	o.mu.Unlock()
	o.ev.add("VIOLATION", "%s: %s", invariant, msg)
	if first {
		o.t.Errorf("invariant %q violated: %s\nlast events:\n%s", invariant, msg, o.ev.tail())
	}
}

func (o *observer) count(invariant string, n int) {
	o.mu.Lock()
	o.checks[invariant] += n
	o.mu.Unlock()
}

// noteDrift tells the checker a drift value is the injector's own edit.
func (o *observer) noteDrift(value string) {
	o.mu.Lock()
	o.drifts[value] = true
	o.mu.Unlock()
}

// faultsStopped starts the convergence clock.
func (o *observer) faultsStopped(at time.Time) {
	o.mu.Lock()
	o.stoppedAt = at
	o.mu.Unlock()
}

// run checks every member each interval until ctx ends.
func (o *observer) run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for _, m := range o.members {
			o.checkMember(ctx, m)
		}
		o.checkConvergence()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// list returns template key → object on m.
func list(ctx context.Context, m *testenv.Member) (map[string]seenObject, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cms, err := m.Client().CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: templateLabel})
	if err != nil {
		return nil, err
	}
	out := map[string]seenObject{}
	for _, cm := range cms.Items {
		out[cm.Namespace+"/"+cm.Name] = seenObject{uid: string(cm.UID), value: cm.Data["value"]}
	}
	return out, nil
}

// checkMember checks one listing of m against what was seen before.
func (o *observer) checkMember(ctx context.Context, m *testenv.Member) {
	now, err := list(ctx, m)
	if err != nil {
		if ctx.Err() == nil {
			o.mu.Lock()
			o.unreachable++
			o.mu.Unlock()
		}
		return
	}
	seen := o.seen[m.Name]
	for key, before := range seen {
		o.count("nothing-lost", 1)
		after, ok := now[key]
		switch {
		case !ok:
			o.violate("nothing-lost", m.Name+key, "%s: %s (uid %s) was deleted; no good commit removed it", m.Name, key, before.uid)
			delete(seen, key)
		case after.uid != before.uid:
			o.violate("nothing-lost", m.Name+key, "%s: %s was deleted and created again (uid %s → %s)", m.Name, key, before.uid, after.uid)
		}
	}
	for key, obj := range now {
		o.checkValue(m.Name, key, obj)
	}
	o.timeApplied(m.Name)
}

// checkValue checks one template's value on member: never a bad commit's,
// never an older commit's than seen before; a drift value is the
// injector's own edit.
func (o *observer) checkValue(member, key string, obj seenObject) {
	o.count("never-backwards", 1)
	o.mu.Lock()
	prev := o.seen[member][key]
	if prev == nil {
		prev = &seenObject{}
		o.seen[member][key] = prev
		o.ev.add("seen", "%s %s created uid=%s value=%s", member, key, obj.uid, obj.value)
	}
	knownDrift := o.drifts[obj.value]
	o.mu.Unlock()
	defer func() { prev.uid, prev.value = obj.uid, obj.value }()
	if obj.value == prev.value {
		return
	}
	o.ev.add("seen", "%s %s %s → %s", member, key, prev.value, obj.value)
	switch n, err := strconv.Atoi(obj.value); {
	case strings.HasPrefix(obj.value, "drift-") && knownDrift:
	case strings.HasPrefix(obj.value, "bad-"):
		o.violate("bad-commit-applied", member+key, "%s: %s has value %q from a bad commit", member, key, obj.value)
	case err != nil:
		o.violate("unknown-value", member+key, "%s: %s has value %q nobody committed", member, key, obj.value)
	case n < prev.max:
		o.violate("never-backwards", member+key+obj.value, "%s: %s went back from seq %d to %d", member, key, prev.max, n)
	default:
		prev.max = n
	}
}

// timeApplied records, for each good commit not yet seen on member, the
// time from its push until every template it changed shows its sequence
// number or a newer one.
func (o *observer) timeApplied(member string) {
	_, good, _ := o.com.snapshot()
	o.mu.Lock()
	defer o.mu.Unlock()
	at := time.Now()
	for _, g := range good {
		if o.applied[member][g.seq] {
			continue
		}
		done := true
		for _, k := range g.changed {
			if s := o.seen[member][k]; s == nil || s.max < g.seq {
				done = false
				break
			}
		}
		if done {
			o.applied[member][g.seq] = true
			if g.seq > 1 {
				o.latencies = append(o.latencies, at.Sub(g.pushed))
				o.ev.add("applied", "%s seq=%d after %s", member, g.seq, at.Sub(g.pushed).Round(time.Millisecond))
			}
		}
	}
}

// checkConvergence, once the faults have stopped, checks that every
// member holds the newest good values within convergeBound, and keeps
// them from then on.
func (o *observer) checkConvergence() {
	o.mu.Lock()
	stopped, converged := o.stoppedAt, o.convergedAt
	o.mu.Unlock()
	if stopped.IsZero() {
		return
	}
	o.count("convergence", 1)
	want, _, broken := o.com.snapshot()
	diff := o.divergence(want)
	if broken {
		diff = append(diff, "the newest commit is a bad one")
	}
	switch {
	case len(diff) == 0 && converged.IsZero():
		o.mu.Lock()
		o.convergedAt = time.Now()
		o.mu.Unlock()
		o.ev.add("converged", "every member holds the newest good values, %s after the faults stopped", time.Since(stopped).Round(time.Millisecond))
	case len(diff) > 0 && !converged.IsZero():
		o.violate("convergence", "after", "a member left the newest good values after converging: %s", strings.Join(diff, "; "))
	case len(diff) > 0 && time.Since(stopped) > convergeBound:
		o.violate("convergence", "bound", "not converged %s after the faults stopped: %s", convergeBound, strings.Join(diff, "; "))
	}
}

// divergence lists how the last listing of each member differs from want.
func (o *observer) divergence(want map[string]int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var diff []string
	for _, m := range o.members {
		for key, v := range want {
			s := o.seen[m.Name][key]
			switch {
			case s == nil:
				diff = append(diff, fmt.Sprintf("%s %s absent, want %d", m.Name, key, v))
			case s.value != strconv.Itoa(v):
				diff = append(diff, fmt.Sprintf("%s %s=%s, want %d", m.Name, key, s.value, v))
			}
		}
	}
	sort.Strings(diff)
	if len(diff) > 6 {
		diff = append(diff[:6], fmt.Sprintf("and %d more", len(diff)-6))
	}
	return diff
}

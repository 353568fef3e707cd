package soak

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// monitor samples every process (RSS, goroutines, sockets), notices a
// process that died though nobody killed it, and follows the members'
// audit logs for the one-writer invariant.
type monitor struct {
	obs    *observer
	ev     *eventLog
	procs  []*proc
	audits []*auditLog
	users  map[string]bool // identities whose writes the audit logs keep
	// replicaUsers are the replicas' identities; one writing to the pull
	// member, which only its agent applies to, is a violation.
	replicaUsers map[string]bool
	pullMember   string

	mu       sync.Mutex
	series   map[string]*series // proc name + start → series
	order    []*series
	restarts int
}

func newMonitor(obs *observer, ev *eventLog, procs []*proc, audits []*auditLog, replicaUsers map[string]bool, agentUser, pullMember string) *monitor {
	users := map[string]bool{agentUser: true}
	for u := range replicaUsers {
		users[u] = true
	}
	return &monitor{obs: obs, ev: ev, procs: procs, audits: audits, users: users,
		replicaUsers: replicaUsers, pullMember: pullMember, series: map[string]*series{}}
}

// run samples every interval until ctx ends, then scans the audit logs a
// last time.
func (m *monitor) run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	lastJudged := time.Now()
	for {
		m.sampleAll()
		m.checkWriters()
		if time.Since(lastJudged) > time.Minute {
			m.judge()
			lastJudged = time.Now()
		}
		select {
		case <-ctx.Done():
			m.checkWriters()
			m.judge()
			return
		case <-tick.C:
		}
	}
}

// sampleAll measures each process; one not running that nobody killed
// crashed.
func (m *monitor) sampleAll() {
	for _, p := range m.procs {
		m.obs.count("process-alive", 1)
		s, _, began, err := measure(p)
		if err != nil {
			m.exited(p)
			continue
		}
		key := fmt.Sprintf("%s#%d", p.name, p.startCount())
		m.mu.Lock()
		sr := m.series[key]
		if sr == nil {
			sr = &series{proc: p.name, start: p.startCount(), began: began}
			m.series[key] = sr
			m.order = append(m.order, sr)
		}
		sr.samples = append(sr.samples, s)
		m.mu.Unlock()
	}
}

// exited handles a process found not running. One the soak killed is
// left to its fault; a leader-elected replica exits when it loses its
// Lease, by design, and is started again as its Deployment would; any
// other exit is a crash.
func (m *monitor) exited(p *proc) {
	switch {
	case p.isDown():
	case p.restartOnExit:
		m.ev.add("restart", "%s exited on its own (%s); started again", p.name, lastLine(p.logTail(1)))
		if err := p.start(); err != nil {
			m.ev.add("restart", "%s: %v", p.name, err)
		}
		m.mu.Lock()
		m.restarts++
		m.mu.Unlock()
	default:
		m.obs.violate("process-alive", p.name, "%s exited though nobody killed it; tail of its log:\n%s", p.name, p.logTail(30))
	}
}

func lastLine(s string) string {
	if len(s) > 200 {
		s = s[len(s)-200:]
	}
	return s
}

// judge fails an incarnation whose samples span judgeAfter and grow
// faster than the bounds.
func (m *monitor) judge() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sr := range m.order {
		if sr.judged {
			continue
		}
		for _, b := range []struct {
			what  string
			value func(sample) (float64, bool)
			max   float64
		}{{"RSS MiB", rssOf, maxRSSSlope}, {"goroutines", goOf, maxGoSlope}, {"sockets", socketsOf, maxConnsSlope}} {
			slope, span, ok := sr.slope(b.value)
			if !ok || span < judgeAfter.Minutes() {
				continue
			}
			sr.judged = true
			m.obs.count("bounded-resources", 1)
			if slope > b.max {
				m.obs.violate("bounded-resources", sr.proc+b.what, "%s (start %d): %s grow %.1f per minute over %.1f min (bound %.0f)",
					sr.proc, sr.start, b.what, slope, span, b.max)
			}
		}
	}
}

// checkWriters scans the audit logs and checks one writer per member.
func (m *monitor) checkWriters() {
	for _, a := range m.audits {
		if err := a.scan(m.users); err != nil {
			m.ev.add("audit", "%s: failed to read the audit log: %v", a.member, err)
			continue
		}
		m.obs.count("one-writer", 1)
		if a.member == m.pullMember {
			for u, n := range a.users {
				if m.replicaUsers[u] {
					m.obs.violate("one-writer", a.member+u, "controller replica %s wrote %d times to the pull member %s", u, n, a.member)
				}
			}
			continue
		}
		_, _, overlaps := a.handovers()
		for _, o := range overlaps {
			m.obs.violate("one-writer", o.middle.id, "%s: two replicas wrote at overlapping times: %s", a.member, o)
		}
	}
}

// slopes describes the resource slope of each incarnation that lived long
// enough to measure, for the summary.
func (m *monitor) slopes() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, sr := range m.order {
		rss, span, ok := sr.slope(rssOf)
		if !ok || span < 0.5 {
			continue
		}
		g, _, _ := sr.slope(goOf)
		so, _, _ := sr.slope(socketsOf)
		last := sr.samples[len(sr.samples)-1]
		fmt.Fprintf(&b, "  %-8s start %d: %.1f min measured, RSS %.0f MiB (%+.2f MiB/min), goroutines %.0f (%+.1f/min), sockets %.0f (%+.1f/min)\n",
			sr.proc, sr.start, span, last.rssMiB, rss, last.gor, g, last.sockets, so)
	}
	return b.String()
}

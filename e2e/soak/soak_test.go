package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/testenv"
)

// soakConfig is what the environment asks of a run.
type soakConfig struct {
	duration time.Duration
	seed     uint64
	mode     string // modeShard or modeLeader
}

// readConfig reads PROPAGIT_SOAK_DURATION (the test is skipped without
// it) and PROPAGIT_SOAK_SEED (default: from the clock).
func readConfig(t *testing.T) soakConfig {
	raw := os.Getenv("PROPAGIT_SOAK_DURATION")
	if raw == "" {
		t.Skip("set PROPAGIT_SOAK_DURATION (e.g. 2m, 10m, 1h) to run the soak")
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 30*time.Second {
		t.Fatalf("PROPAGIT_SOAK_DURATION=%q: want a duration of at least 30s", raw)
	}
	cfg := soakConfig{duration: d, seed: uint64(time.Now().UnixNano()), mode: modeShard}
	switch m := os.Getenv("PROPAGIT_SOAK_MODE"); m {
	case "", modeShard:
	case modeLeader:
		cfg.mode = m
	default:
		t.Fatalf("PROPAGIT_SOAK_MODE=%q: want %s (sharded replicas, Git store) or %s (leader election, Work CRs)", m, modeShard, modeLeader)
	}
	if raw := os.Getenv("PROPAGIT_SOAK_SEED"); raw != "" {
		if cfg.seed, err = strconv.ParseUint(raw, 10, 64); err != nil {
			t.Fatalf("PROPAGIT_SOAK_SEED=%q: %v", raw, err)
		}
	}
	return cfg
}

// TestSoak runs the chaos soak: sharded replicas with the Git store, two
// push members and a pull member, commits and overlapping faults for 80%
// of PROPAGIT_SOAK_DURATION, then convergence, with every invariant
// checked as it runs. See the package comment.
func TestSoak(t *testing.T) {
	cfg := readConfig(t)
	t.Logf("soak: seed %d, duration %s, mode %s (replay with PROPAGIT_SOAK_SEED=%d PROPAGIT_SOAK_MODE=%s)", cfg.seed, cfg.duration, cfg.mode, cfg.seed, cfg.mode)
	wall := time.Now()
	s := &soak{t: t, cfg: cfg, dir: t.TempDir()}
	bin, built := buildBinary(s.dir)
	s.env = testenv.Start(t, testenv.Options{Members: 4, Audit: true})
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	s.bin = bin
	s.members, s.hub = s.env.Members[:3], s.env.Members[3]
	s.logDir = filepath.Join(os.TempDir(), fmt.Sprintf("propagit-soak-%d", cfg.seed))
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ev, err := newEventLog(filepath.Join(s.logDir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ev.close()
		if !t.Failed() && os.Getenv("PROPAGIT_SOAK_KEEP") == "" {
			_ = os.RemoveAll(s.logDir)
			return
		}
		t.Logf("soak: event log and process logs kept in %s", s.logDir)
	})
	s.ev = ev
	t.Logf("soak: event log at %s (kept on failure or with PROPAGIT_SOAK_KEEP=1)", ev.file.Name())
	repoURL := s.startGit()
	names := []string{s.members[0].Name, s.members[1].Name, s.members[2].Name}
	s.com, err = newCommitter(filepath.Join(s.dir, "checkout"), s.git.RepoURL("fleet.git"), names,
		[]string{"Push", "Push", "Pull"}, cfg.seed, ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.com.initial(); err != nil {
		t.Fatal(err)
	}
	s.startProcesses(repoURL)
	s.com.notify = func() { notifyAll(s.replicas) }
	took := s.waitInitial(2 * time.Minute)
	setup := time.Since(wall)
	t.Logf("soak: set up in %s (first commit on every member %s after the processes started)", setup.Round(100*time.Millisecond), took.Round(100*time.Millisecond))
	r := s.run()
	r.setup, r.wall = setup, time.Since(wall)
	t.Log("soak summary:\n" + r.String())
}

// result is what the summary reports.
type result struct {
	cfg          soakConfig
	setup, wall  time.Duration
	faults       map[string]int
	obs          *observer
	mon          *monitor
	good         int
	bad          map[string]int
	drifts       int
	driftFixes   []time.Duration
	convergeTook time.Duration
}

// run is the soak proper: checker and monitor throughout, committer and
// injector for 80% of the duration, then convergence until the end.
func (s *soak) run() *result {
	obs := newObserver(s.t, s.ev, s.com, s.members)
	for _, m := range s.members {
		s.audits = append(s.audits, &auditLog{member: m.Name, path: m.AuditLogPath(), users: map[string]int{}})
	}
	replicaUsers := map[string]bool{}
	for _, p := range s.replicas {
		replicaUsers[saUser("soak-"+p.name)] = true
	}
	procs := append(append([]*proc(nil), s.replicas...), s.agent)
	mon := newMonitor(obs, s.ev, procs, s.audits, replicaUsers, saUser("soak-agent"), s.members[2].Name)
	inj := &injector{t: s.t, rng: rand.New(rand.NewPCG(s.cfg.seed, 0xfa017)), ev: s.ev, obs: obs, com: s.com,
		members: s.members, hub: s.hub, proxy: s.proxy, replicas: s.replicas, agent: s.agent,
		busy: map[string]bool{}, counts: map[string]int{}, mode: s.cfg.mode}

	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() { obs.run(ctx, 500*time.Millisecond) })
	bg.Go(func() { mon.run(ctx, 3*time.Second) })
	start := time.Now()
	faultsEnd, end := start.Add(s.cfg.duration*8/10), start.Add(s.cfg.duration)
	s.ev.add("phase", "faults and commits until %s", faultsEnd.Format(time.TimeOnly))
	var work sync.WaitGroup
	work.Go(func() { inj.run(ctx, faultsEnd) })
	work.Go(func() {
		if err := s.com.run(ctx, faultsEnd); err != nil {
			s.t.Errorf("committer: %v", err)
		}
	})
	work.Wait()
	if err := s.com.finish(); err != nil {
		s.t.Errorf("committer: %v", err)
	}
	stopped := time.Now()
	obs.faultsStopped(stopped)
	s.ev.add("phase", "faults stopped; convergence within %s", convergeBound)
	s.waitEnd(obs, stopped, end)
	cancel()
	bg.Wait()

	_, good, _ := s.com.snapshot()
	s.com.mu.Lock()
	bad := s.com.bad
	s.com.mu.Unlock()
	r := &result{cfg: s.cfg, faults: inj.counts, obs: obs, mon: mon, good: len(good), bad: bad,
		drifts: inj.drifts, driftFixes: inj.driftFixes}
	if !obs.convergedAt.IsZero() {
		r.convergeTook = obs.convergedAt.Sub(stopped)
	}
	return r
}

// waitEnd returns at end once the members have converged, or once the
// convergence bound has passed (the checker reports that).
func (s *soak) waitEnd(obs *observer, stopped, end time.Time) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		obs.mu.Lock()
		converged := !obs.convergedAt.IsZero()
		obs.mu.Unlock()
		if time.Now().After(end) && (converged || time.Since(stopped) > convergeBound+2*time.Second) {
			return
		}
	}
}

// String is the summary the soak prints.
func (r *result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  seed %d, mode %s, duration %s, wall %s (setup %s)\n", r.cfg.seed, r.cfg.mode, r.cfg.duration,
		r.wall.Round(time.Second), r.setup.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "  faults: %s\n", counts(r.faults))
	fmt.Fprintf(&b, "  commits: %d good, %d bad (%s)\n", r.good, sum(r.bad), counts(r.bad))
	fixes := sorted(r.driftFixes)
	fmt.Fprintf(&b, "  drift edits: %d, %d put back within the faults (p50 %s, max %s)\n", r.drifts, len(fixes), pct(fixes, 0.5), pct(fixes, 1))
	lat := sorted(r.obs.latencies)
	fmt.Fprintf(&b, "  commit→applied under faults (%d commit×member): p50 %s, p99 %s, max %s\n", len(lat),
		pct(lat, 0.50), pct(lat, 0.99), pct(lat, 1))
	fmt.Fprintf(&b, "  converged %s after the faults stopped (bound %s)\n", r.convergeTook.Round(time.Millisecond), convergeBound)
	fmt.Fprintf(&b, "  invariant checks run: %s\n", counts(r.obs.checks))
	fmt.Fprintf(&b, "  invariant violations: %d (%s)\n", sum(r.obs.violations), counts(r.obs.violations))
	fmt.Fprintf(&b, "  replicas restarted after exiting on their own (leader mode: a lost lease): %d\n", r.mon.restarts)
	for _, a := range r.mon.audits {
		sw, gap, ov := a.handovers()
		shortest := "-"
		if sw > 0 {
			shortest = gap.Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "  %s audit: writes by %s; %d writer changes, shortest gap %s, %d overlaps\n",
			a.member, strings.ReplaceAll(counts(a.users), saUser(""), ""), sw, shortest, len(ov))
	}
	fmt.Fprintf(&b, "  resources (slopes after %s warm-up; judged over ≥ %s):\n%s", warmUp, judgeAfter, r.mon.slopes())
	return b.String()
}

func sorted(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// pct is the q-quantile of sorted, "-" when empty.
func pct(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return sorted[int(float64(len(sorted)-1)*q+0.5)].Round(time.Millisecond).String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// dirPrefix starts the name of every Env's temporary root.
	dirPrefix = "propagit-testenv-"
	// ownerFile in the root holds the pid of the test binary that owns it.
	ownerFile = "owner.pid"
)

// Options says what to start.
type Options struct {
	// Members is how many independent members to start; 0 means 1.
	Members int
	// Workloads also starts kube-controller-manager, kube-scheduler and kwok
	// with one fake Node in every member, so Deployments become Available.
	Workloads bool
	// AssetsDir holds the binaries; empty means DefaultAssetsDir().
	AssetsDir string
	// Audit makes every member's apiserver write an audit log of the
	// requests that change objects, at Member.AuditLogPath: proof from
	// the member itself of who wrote what.
	Audit bool
}

// Env is a set of running members under one temporary root.
type Env struct {
	// Members are named member1 … memberN, in that order.
	Members []*Member

	dir      string
	mu       sync.Mutex // guards Members and stopping while New runs
	stopping bool
	stopOnce sync.Once
	stopErr  error
}

// Start starts an Env for a test and stops it in t.Cleanup. If the test has
// failed by then, the tail of every member's apiserver log is logged first.
// A failure to start fails the test.
//
// With -short, a test that needs members is skipped: `go test -short ./...`
// is the fast loop of pure and single-process tests.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs real members; skipped with -short")
	}
	began := time.Now()
	e, err := New(opts)
	if err != nil {
		t.Fatalf("failed to start test members: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range e.Members {
				t.Logf("%s: tail of kube-apiserver.log:\n%s", m.Name,
					tailFile(filepath.Join(m.Dir, binAPIServer+".log"), 40))
			}
		}
		if err := e.Stop(); err != nil {
			t.Errorf("failed to stop test members: %v", err)
		}
	})
	t.Logf("testenv: %d member(s) ready in %s (workloads: %v)",
		len(e.Members), time.Since(began).Round(10*time.Millisecond), opts.Workloads)
	return e
}

// New starts the members in parallel (startingAtOnce at a time in the
// process) and returns once all are ready. The caller must call Stop; a
// SIGINT or SIGTERM stops the Env too. On error everything started so far
// is stopped and removed.
func New(opts Options) (*Env, error) {
	if opts.Members <= 0 {
		opts.Members = 1
	}
	if opts.AssetsDir == "" {
		opts.AssetsDir = DefaultAssetsDir()
	}
	if err := checkAssets(opts.AssetsDir, opts.Workloads); err != nil {
		return nil, err
	}
	sweepStaleDirs()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("failed to create temporary folder: %w", err)
	}
	e := &Env{dir: dir}
	track(e)
	if err := e.start(opts); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// startingAtOnce is how many members start at the same time in the whole
// test binary, whatever the number of Envs (parallel tests): a start (etcd,
// then an apiserver building its caches) takes a core for seconds, and this
// machine has two. More members start in waves.
const startingAtOnce = 3

// startSlots bounds the starts of every Env of the process.
var startSlots = make(chan struct{}, startingAtOnce)

// start writes the owner file, prepares every member, then starts them in
// parallel, startingAtOnce at a time.
func (e *Env) start(opts Options) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(e.dir, ownerFile), pid, 0o600); err != nil {
		return fmt.Errorf("failed to write owner file: %w", err)
	}
	members := make([]*Member, 0, opts.Members)
	for i := 1; i <= opts.Members; i++ {
		m, err := newMember(e.dir, fmt.Sprintf("member%d", i), opts.AssetsDir, opts.Workloads, opts.Audit)
		if err != nil {
			return err
		}
		if opts.Audit {
			if err := os.WriteFile(filepath.Join(m.Dir, auditPolicyFile), []byte(auditPolicy), 0o600); err != nil {
				return fmt.Errorf("failed to write the audit policy of %s: %w", m.Name, err)
			}
		}
		members = append(members, m)
	}
	// Publish the members before any process starts, so a concurrent Stop
	// (from the signal handler) either sees them or prevents the start.
	e.mu.Lock()
	stopping := e.stopping
	e.Members = members
	e.mu.Unlock()
	if stopping {
		return errors.New("the environment was stopped while starting")
	}
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() {
			startSlots <- struct{}{}
			defer func() { <-startSlots }()
			ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
			defer cancel()
			errs[i] = m.start(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Dir returns the Env's temporary root; every member folder is inside it and
// every child process's command line names a path inside it.
func (e *Env) Dir() string { return e.dir }

// StartedPIDs returns the id of every process the Env ever started, running
// or not.
func (e *Env) StartedPIDs() []int {
	var pids []int
	for _, m := range e.Members {
		pids = append(pids, m.startedPIDs()...)
	}
	return pids
}

// Stop stops every member's processes in parallel, waits for them, and
// removes the temporary root. Later calls return the first call's result.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		untrack(e)
		e.mu.Lock()
		e.stopping = true
		members := e.Members
		e.mu.Unlock()
		errs := make([]error, len(members)+1)
		var wg sync.WaitGroup
		for i, m := range members {
			wg.Go(func() { errs[i] = m.stop() })
		}
		wg.Wait()
		if err := os.RemoveAll(e.dir); err != nil {
			errs[len(members)] = fmt.Errorf("failed to remove %s: %w", e.dir, err)
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// live is the set of Envs a signal must stop.
var live = struct {
	sync.Mutex
	envs      map[*Env]struct{}
	installed bool
}{envs: map[*Env]struct{}{}}

// track adds e to the live set and installs the signal handler once.
func track(e *Env) {
	live.Lock()
	defer live.Unlock()
	live.envs[e] = struct{}{}
	if !live.installed {
		live.installed = true
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go stopOnSignal(ch)
	}
}

// untrack removes e from the live set.
func untrack(e *Env) {
	live.Lock()
	defer live.Unlock()
	delete(live.envs, e)
}

// stopOnSignal stops every live Env when a signal arrives, then restores the
// default action and re-raises the signal so the binary ends as it would
// have without testenv.
func stopOnSignal(ch <-chan os.Signal) {
	sig := <-ch
	live.Lock()
	envs := make([]*Env, 0, len(live.envs))
	for e := range live.envs {
		envs = append(envs, e)
	}
	live.Unlock()
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Go(func() { _ = e.Stop() })
	}
	wg.Wait()
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}

// sweepStaleDirs removes temporary roots whose owning test binary is gone,
// e.g. after it was killed with SIGKILL (its children died with it through
// the parent-death signal, but nothing removed the folder).
func sweepStaleDirs() {
	roots, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, root := range roots {
		data, err := os.ReadFile(filepath.Join(root, ownerFile))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(root)
	}
}

// processAlive reports whether a process with that id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

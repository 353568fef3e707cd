package e2etest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/propagit/propagit/internal/testenv"
)

// Pool is a few members started once by a test binary, on first use, and
// shared by every test that does not break them: one apiserver serves
// dozens of tests, as in fluxcd/pkg's ssa suite. A test that uses the pool
// keeps to its own namespaces (RandomName), its own Git remote and its own
// works store, so it neither sees nor prunes another test's objects. Tests
// that stop, kill or restart a member, write cluster-scoped objects, read
// everything of a kind on a member, or keep Work CRs on a hub (their
// namespaces are named after the clusters) start members of their own with
// testenv.Start.
type Pool struct {
	opts testenv.Options

	mu  sync.Mutex
	env *testenv.Env
	err error
}

// NewPool returns a pool of the members opts describes, not started yet.
func NewPool(opts testenv.Options) *Pool { return &Pool{opts: opts} }

// Members returns the pool's first n members, starting the pool on first
// use. It skips the test with -short and fails it when the pool cannot
// start or holds fewer than n members.
func (p *Pool) Members(t testing.TB, n int) []*testenv.Member {
	t.Helper()
	if testing.Short() {
		t.Skip("needs real members; skipped with -short")
	}
	env, err := p.start()
	if err != nil {
		t.Fatalf("failed to start the shared members: %v", err)
	}
	if n > len(env.Members) {
		t.Fatalf("the pool holds %d members, the test wants %d", len(env.Members), n)
	}
	return env.Members[:n]
}

// start starts the pool once; a failed start is not retried.
func (p *Pool) start() (*testenv.Env, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.env == nil && p.err == nil {
		p.env, p.err = testenv.New(p.opts)
		if p.err != nil {
			p.err = fmt.Errorf("%d member(s): %w", max(p.opts.Members, 1), p.err)
		}
	}
	return p.env, p.err
}

// Stop stops the pool's members if they were started; TestMain calls it
// after the tests ran.
func (p *Pool) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.env == nil {
		return nil
	}
	return p.env.Stop()
}

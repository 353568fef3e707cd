// Package e2etest holds what the end-to-end test packages (e2e, e2e/pull,
// e2e/sync, e2e/soak) share, so that no package keeps a copy: waiting on a
// condition with a deadline, names no other test uses, running a
// component's Run loop for the length of a test; Git remotes and working
// copies; the fleet's manifests; members' kubeconfigs, CRDs and the hub;
// the controller's test options and reading its status; the propagit
// binary; GitHub webhook events.
package e2etest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// Eventually polls cond every interval until it holds, and fails the test
// with cond's last message when it does not within timeout. It returns how
// long the wait took.
func Eventually(t testing.TB, timeout, interval time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s; last state: %s", timeout, msg)
		}
		<-tick.C
	}
}

// RandomName returns prefix-xxxxxx, a name (of a namespace, say) no other
// test uses.
func RandomName(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return prefix + "-" + string(b)
}

// Loop is a component's Run (controller, agent) running in the background
// until Stop or the end of the test.
type Loop struct {
	t       testing.TB
	what    string
	timeout time.Duration
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// StartLoop runs run in a goroutine and stops it when the test ends. Stop
// fails the test when run does not return within stopTimeout of its
// context ending, or returns an error.
func StartLoop(t testing.TB, what string, stopTimeout time.Duration, run func(context.Context) error) *Loop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Loop{t: t, what: what, timeout: stopTimeout, cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- run(ctx) }()
	t.Cleanup(l.Stop)
	return l
}

// Stop cancels the loop and waits for run to return; later calls do
// nothing.
func (l *Loop) Stop() {
	l.t.Helper()
	if l.stopped {
		return
	}
	l.stopped = true
	l.cancel()
	timer := time.NewTimer(l.timeout)
	defer timer.Stop()
	select {
	case err := <-l.done:
		if err != nil {
			l.t.Errorf("%s: Run returned an error: %v", l.what, err)
		}
	case <-timer.C:
		l.t.Fatalf("%s: Run did not return within %s of its context ending", l.what, l.timeout)
	}
}

// FileTail returns the last n lines of the file at path (a process's log),
// "" when it cannot be read.
func FileTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ExitIfShort, called first in an end-to-end package's TestMain, ends the
// test binary at once with -short: every test there needs real members or
// builds the binary, and `go test -short ./...` is the fast loop.
func ExitIfShort() {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: every test of this package needs real members")
		os.Exit(0)
	}
}

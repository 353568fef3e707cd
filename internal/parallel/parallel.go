// Package parallel runs the iterations of a loop on several workers:
// render's stages and the writing of a render's folders on GOMAXPROCS
// (For, Each), the applier's requests to a member on as many as its
// concurrency allows (Limited). Callers write results by index, so what
// they compute does not depend on the schedule.
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls, on GOMAXPROCS workers, work(i) for every i in [0, n), each
// worker with its own work function from newWorker (for state a worker
// reuses from one index to the next).
func For(n int, newWorker func() func(int)) {
	run(runtime.GOMAXPROCS(0), n, newWorker)
}

// Each calls f(0) … f(n-1) on GOMAXPROCS workers and returns the error of
// the lowest index that failed; after a failure the indexes not started yet
// are skipped.
func Each(n int, f func(i int) error) error {
	var failed atomic.Bool
	errs := make([]error, n)
	For(n, func() func(int) {
		return func(i int) {
			if failed.Load() {
				return
			}
			if errs[i] = f(i); errs[i] != nil {
				failed.Store(true)
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Limited calls fn(i) for every i in [0, n), at most limit at a time (one
// when limit < 1): the form for work that waits on the network rather than
// the CPU. Indexes start in increasing order; once ctx is done no further
// call starts. Limited returns when the started calls have returned.
func Limited(ctx context.Context, n, limit int, fn func(i int)) {
	run(max(limit, 1), n, func() func(int) {
		return func(i int) {
			if ctx.Err() == nil {
				fn(i)
			}
		}
	})
}

// run calls work(i) for every i in [0, n) on min(workers, n) goroutines,
// each taking the next index not taken yet.
func run(workers, n int, newWorker func() func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			work := newWorker()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				work(int(i))
			}
		})
	}
	wg.Wait()
}

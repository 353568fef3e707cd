// Package parallel runs the iterations of a loop on GOMAXPROCS workers:
// render's stages and the writing of a render's folders use it. Callers
// write results by index, so what they compute does not depend on the
// schedule.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls, on GOMAXPROCS workers, work(i) for every i in [0, n), each
// worker with its own work function from newWorker (for state a worker
// reuses from one index to the next).
func For(n int, newWorker func() func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			work := newWorker()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				work(int(i))
			}
		})
	}
	wg.Wait()
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

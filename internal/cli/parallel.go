package cli

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// inParallel calls f(0) … f(n-1) on GOMAXPROCS workers and returns the
// error of the lowest index that failed; after a failure the indexes not
// started yet are skipped. Callers write results by index, so the output
// does not depend on the schedule.
func inParallel(n int, f func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && !failed.Load(); i = int(next.Add(1) - 1) {
				if errs[i] = f(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

package parallel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestForCallsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		calls := make([]atomic.Int32, n)
		var workers atomic.Int32
		For(n, func() func(int) {
			workers.Add(1)
			return func(i int) { calls[i].Add(1) }
		})
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Errorf("n=%d: index %d called %d times", n, i, got)
			}
		}
		if n == 0 && workers.Load() != 0 {
			t.Errorf("n=0: %d workers started", workers.Load())
		}
	}
}

func TestEachReturnsTheLowestIndexThatFailed(t *testing.T) {
	if err := Each(100, func(int) error { return nil }); err != nil {
		t.Errorf("Each = %v, want nil", err)
	}
	err := Each(100, func(i int) error {
		if i%10 == 3 {
			return fmt.Errorf("index %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "index 3" {
		t.Errorf("Each = %v, want the error of index 3", err)
	}
}

func TestEachSkipsWhatIsNotStartedAfterAFailure(t *testing.T) {
	var calls atomic.Int32
	boom := errors.New("boom")
	err := Each(100000, func(int) error {
		calls.Add(1)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Each = %v, want boom", err)
	}
	if n := calls.Load(); n >= 100000 {
		t.Errorf("f was called %d times after the first failure, want the rest skipped", n)
	}
}

func TestLimitedCallsEveryIndexOnceAtMostLimitAtATime(t *testing.T) {
	for _, limit := range []int{-1, 0, 1, 3, 64} {
		const n = 200
		calls := make([]atomic.Int32, n)
		var running, peak atomic.Int32
		Limited(context.Background(), n, limit, func(i int) {
			now := running.Add(1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			time.Sleep(10 * time.Microsecond)
			running.Add(-1)
			calls[i].Add(1)
		})
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Errorf("limit %d: index %d called %d times", limit, i, got)
			}
		}
		if want := int32(max(limit, 1)); peak.Load() > want {
			t.Errorf("limit %d: %d calls at once, want at most %d", limit, peak.Load(), want)
		}
	}
}

func TestLimitedStartsNothingOnceTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	Limited(ctx, 1000, 1, func(i int) {
		calls.Add(1)
		if i == 9 {
			cancel()
		}
	})
	if n := calls.Load(); n != 10 {
		t.Errorf("%d calls, want 10: the indexes after the cancelling one must not start", n)
	}
}

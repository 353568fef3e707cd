package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
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

package dashboard

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// brokenStore fails every read, as a repository that does not exist does.
type brokenStore struct{ reads atomic.Int64 }

func (b *brokenStore) List(context.Context) ([]*workv1alpha1.Work, error) {
	b.reads.Add(1)
	return nil, errors.New("repository not found")
}

func (b *brokenStore) NewestRevision(context.Context) (string, error) { return "", nil }

func (b *brokenStore) GetStatus(context.Context, string) (*workv1alpha1.WorkStatus, error) {
	return nil, errors.New("repository not found")
}

// TestRetryAfterBacksOff: failures in a row double the wait from the
// refresh interval up to a minute; a success returns to the interval.
func TestRetryAfterBacksOff(t *testing.T) {
	for _, tc := range []struct {
		failures int
		refresh  time.Duration
		want     time.Duration
	}{
		{0, 2 * time.Second, 2 * time.Second},
		{1, 2 * time.Second, 4 * time.Second},
		{3, 2 * time.Second, 16 * time.Second},
		{5, 2 * time.Second, time.Minute},
		{50, 2 * time.Second, time.Minute},
		{3, 5 * time.Minute, 5 * time.Minute}, // never shorter than the interval
	} {
		if got := retryAfter(tc.failures, tc.refresh); got != tc.want {
			t.Errorf("retryAfter(%d, %s) = %s, want %s", tc.failures, tc.refresh, got, tc.want)
		}
	}
}

// TestDashboardOnAnUnreadableStore: the pages say the records were never
// read (not "read 0001-01-01T00:00:00Z") and show the error; Run backs
// off and logs the same error once, not every interval.
func TestDashboardOnAnUnreadableStore(t *testing.T) {
	store := &brokenStore{}
	var logged atomic.Int64
	opts := DefaultOptions()
	opts.Works, opts.Status, opts.Refresh = store, store, 10*time.Millisecond
	opts.Log = funcr.New(func(_, args string) {
		if strings.Contains(args, "repository not found") {
			logged.Add(1)
		}
	}, funcr.Options{})
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Without backoff, 1 s at 10 ms is about 100 reads; with it, 7 at most.
	if n := store.reads.Load(); n < 2 || n > 8 {
		t.Errorf("%d reads in 1 s at a 10 ms interval; want a few, backing off", n)
	}
	if n := logged.Load(); n != 1 {
		t.Errorf("the same error was logged %d times, want once", n)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	_, body := get(t, ts, "/")
	mustContain(t, body, "never read")
	mustContain(t, body, "repository not found")
	if strings.Contains(body, "0001-01-01") {
		t.Error("the page shows the zero time as when the records were read")
	}
}

package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// step applies one revision to a member through Judge the way the
// controller does: a held revision leaves the window as it was.
func step(t *testing.T, w *Window, before, after []workv1alpha1.ObjectKey, at time.Time) (*Hold, *Window) {
	t.Helper()
	h, next := Judge(before, after, w, at, DefaultOptions())
	if h != nil {
		return h, w
	}
	return nil, next
}

func withPrefix(prefix string, count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = prefix + fmt.Sprint(i)
	}
	return out
}

// TestJudgeSplitDeletion: padding a member with cheap objects in one
// commit and deleting the real ones in the next passes the per-revision
// check (10 of 100), and is held by the window (10 of the 10 it ran).
func TestJudgeSplitDeletion(t *testing.T) {
	real, pad := keys(n(10)...), keys(withPrefix("pad-", 90)...)
	padded := append(append([]workv1alpha1.ObjectKey{}, real...), pad...)
	h, w := step(t, nil, real, padded, t0)
	if h != nil {
		t.Fatalf("padding held: %s", h)
	}
	if Check(padded, pad, DefaultOptions()) != nil {
		t.Fatal("the per-revision check holds the second commit by itself: the test no longer shows the split")
	}
	h, _ = step(t, w, padded, pad, t0.Add(time.Hour))
	if h == nil || h.Removed != 10 || h.Total != 10 || !h.Since.Equal(t0) {
		t.Fatalf("deleting the real objects after padding: hold %+v, want 10 of 10 since %s", h, t0)
	}
	if !strings.Contains(h.String(), "since 2026-12-01T09:00:00Z to 10 of the 10") {
		t.Errorf("reason: %s", h)
	}
}

// TestJudgeWindow pins what adds up and what does not.
func TestJudgeWindow(t *testing.T) {
	real, app := keys(n(10)...), keys(withPrefix("app-", 5)...)
	withApp := append(append([]workv1alpha1.ObjectKey{}, real...), app...)

	// An application added and removed again inside the window costs nothing.
	_, w := step(t, nil, real, withApp, t0)
	if h, _ := step(t, w, withApp, real, t0.Add(time.Hour)); h != nil {
		t.Errorf("removing what the window added: held %s", h)
	}

	// Deletions of 3 and then 3 more of 10 (each under half of the
	// member) add up to 6: held.
	_, w = step(t, nil, real, real[3:], t0)
	if h, _ := step(t, w, real[3:], real[6:], t0.Add(time.Hour)); h == nil || h.Removed != 6 || h.Total != 10 {
		t.Errorf("3 then 3 of 10: hold %+v, want 6 of 10", h)
	}

	// An object deleted and added back is given back.
	_, w = step(t, nil, real, real[4:], t0)
	_, w = step(t, w, real[4:], real, t0.Add(time.Hour))
	if h, _ := step(t, w, real, real[4:], t0.Add(2*time.Hour)); h != nil || w.Lost() != 0 {
		t.Errorf("4 deleted, added back, deleted again: held %v, lost %d", h, w.Lost())
	}

	// A member whose objects stayed the same for the window has a new
	// baseline: after a quiet day, the padding counts as the member's.
	pad := keys(withPrefix("pad-", 90)...)
	padded := append(append([]workv1alpha1.ObjectKey{}, real...), pad...)
	_, w = step(t, nil, real, padded, t0)
	if h, _ := step(t, w, padded, pad, t0.Add(23*time.Hour)); h == nil {
		t.Error("deletion 23 h after the padding: not held")
	}
	if h, _ := step(t, w, padded, pad, t0.Add(24*time.Hour)); h != nil {
		t.Errorf("deletion a quiet day after the padding: held %s", h)
	}

	// Any addition or removal keeps the window open.
	_, w = step(t, nil, real, padded, t0)
	_, w = step(t, w, padded, append(padded, keys("one-more")...), t0.Add(20*time.Hour))
	if h, _ := step(t, w, append(padded, keys("one-more")...), append(pad, keys("one-more")...), t0.Add(40*time.Hour)); h == nil {
		t.Error("the window closed 40 h after padding although objects were added 20 h before the deletion")
	}

	// A revision that deletes nothing is never held, whatever was lost.
	_, w = step(t, nil, real, real[3:], t0)
	if _, next := Judge(real[3:], real[6:], w, t0.Add(time.Hour), DefaultOptions()); next.Lost() != 6 {
		t.Fatalf("lost %d, want 6", next.Lost())
	} else if h, _ := Judge(real[6:], append(real[6:], keys("new")...), next, t0.Add(2*time.Hour), DefaultOptions()); h != nil {
		t.Errorf("an addition held: %s", h)
	}

	// With the guard off nothing is held and no window is kept.
	if h, next := Judge(real, nil, nil, t0, Options{MaxPercent: 100}); h != nil || next != nil {
		t.Errorf("guard off: hold %v, window %v", h, next)
	}
}

// TestWindowRecord: a recorded window reads back to the same measure (what
// a restarted controller continues from); anything else does not read.
func TestWindowRecord(t *testing.T) {
	real, pad := keys(n(10)...), keys(withPrefix("pad-", 90)...)
	padded := append(append([]workv1alpha1.ObjectKey{}, real...), pad...)
	_, w := step(t, nil, real, padded, t0)
	_, w = step(t, w, padded, append(pad, real[5:]...), t0.Add(time.Hour)) // 5 of 10 lost: allowed at 50%
	back, err := ParseWindow(w.Record())
	if err != nil {
		t.Fatal(err)
	}
	if back.Baseline != 10 || back.Lost() != 5 || !back.Opened.Equal(t0) || !back.Changed.Equal(t0.Add(time.Hour)) || len(back.added) != 90 {
		t.Fatalf("read back %+v, lost %d", back, back.Lost())
	}
	if h, _ := step(t, back, append(pad, real[5:]...), pad, t0.Add(2*time.Hour)); h == nil || h.Removed != 10 {
		t.Errorf("after a restart, the rest of the real objects: hold %+v, want 10 of 10", h)
	}
	for name, s := range map[string]string{
		"not JSON":            "baseline=3",
		"negative baseline":   `{"baseline":-1}`,
		"bad base64":          `{"baseline":1,"removed":"*"}`,
		"not whole digests":   `{"baseline":1,"removed":"AAAA"}`,
		"too long":            `{"baseline":1,"added":"` + strings.Repeat("A", maxRecord) + `"}`,
		"too many digests":    `{"baseline":1,"added":"` + strings.Repeat("A", (maxTracked+1)*8) + `"}`,
		"negative untracked":  `{"baseline":1,"untracked":-5}`,
		"a list, not a value": `[]`,
	} {
		if _, err := ParseWindow(s); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

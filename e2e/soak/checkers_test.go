package soak

import (
	"testing"
	"time"
)

// TestHandoversFindOverlap proves the one-writer check is not vacuous: a
// clean handover passes, a replica writing between another's writes less
// than overlapWindow apart is an overlap, and one that gets a member back
// after a real handover is not.
func TestHandoversFindOverlap(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(1_800_000_000, 0).Add(time.Duration(ms) * time.Millisecond) }
	w := func(user string, ms int) auditWrite {
		return auditWrite{id: user + at(ms).String(), user: user, at: at(ms), what: "patch"}
	}
	for _, tc := range []struct {
		name     string
		writes   []auditWrite
		switches int
		overlaps int
	}{
		{"one writer", []auditWrite{w("r1", 0), w("r1", 100), w("r1", 200)}, 0, 0},
		{"handover", []auditWrite{w("r1", 0), w("r1", 100), w("r2", 5000), w("r2", 5100)}, 1, 0},
		{"back after a handover", []auditWrite{w("r1", 0), w("r2", 5000), w("r1", 12000)}, 2, 0},
		{"interleaved", []auditWrite{w("r1", 0), w("r2", 300), w("r1", 600)}, 2, 1},
		{"out of order in the log", []auditWrite{w("r1", 600), w("r1", 0), w("r2", 300)}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &auditLog{writes: tc.writes}
			sw, _, ov := a.handovers()
			if sw != tc.switches || len(ov) != tc.overlaps {
				t.Errorf("handovers() = %d switches, overlaps %v; want %d switches, %d overlaps", sw, ov, tc.switches, tc.overlaps)
			}
		})
	}
}

// recorder is a testing.TB that records Errorf calls.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }

// TestObserverFindsViolations proves the value checks fire: a value going
// back, a bad commit's value and a value nobody wrote are violations; a
// newer value and the injector's drift are not.
func TestObserverFindsViolations(t *testing.T) {
	ev, err := newEventLog(t.TempDir() + "/events.log")
	if err != nil {
		t.Fatal(err)
	}
	defer ev.close()
	rec := &recorder{TB: t}
	o := newObserver(rec, ev, &committer{}, nil)
	o.seen["m"] = map[string]*seenObject{}
	o.noteDrift("drift-1")
	steps := []struct {
		value     string
		violation string
	}{
		{"3", ""}, {"5", ""}, {"drift-1", ""}, {"5", ""}, {"4", "never-backwards"},
		{"bad-6", "bad-commit-applied"}, {"drift-9", "unknown-value"}, {"7", ""},
	}
	for _, s := range steps {
		before := o.violations[s.violation]
		o.checkValue("m", "ns/a", seenObject{uid: "u1", value: s.value})
		if s.violation != "" && o.violations[s.violation] != before+1 {
			t.Errorf("value %s: no %s violation", s.value, s.violation)
		}
	}
	if n := sum(o.violations); n != 3 {
		t.Errorf("%d violations (%v), want 3", n, o.violations)
	}
	if rec.errors != 3 {
		t.Errorf("%d test errors reported, want 3", rec.errors)
	}
}

package status

import (
	"testing"
	"time"

	"github.com/propagit/propagit/internal/works"
)

// TestJudgeRecorder: the one rule status --exit-code and the dashboard
// judge the controller's heartbeat by: none is live, stale from exactly
// the stale age, and more than MaxHeartbeatSkew ahead proves nothing.
func TestJudgeRecorder(t *testing.T) {
	now := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, c := range []struct {
		name string
		hb   *time.Time
		want RecorderVerdict
	}{
		{"none", nil, RecorderLive},
		{"now", at(0), RecorderLive},
		{"4m59s ago", at(-4*time.Minute - 59*time.Second), RecorderLive},
		{"5m ago", at(-5 * time.Minute), RecorderStale},
		{"a day ago", at(-24 * time.Hour), RecorderStale},
		{"skew ahead", at(MaxHeartbeatSkew), RecorderLive},
		{"beyond the skew", at(MaxHeartbeatSkew + time.Second), RecorderAhead},
	} {
		if got := JudgeRecorder(c.hb, now, DefaultStaleAfter); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
}

// TestReportSetRecorder: the report carries the heartbeat and the refused
// revision as the store keeps them, sanitized, and a state without a
// refusal clears an earlier one.
func TestReportSetRecorder(t *testing.T) {
	at := time.Date(2026, 12, 3, 18, 0, 0, 0, time.FixedZone("CET", 3600))
	since := at.Add(-time.Hour)
	var r Report
	r.SetRecorder(works.RecorderState{At: at, RefusedRevision: "9A70926000000000000000000000000000000000",
		RefusedReason: "commit 9a70926:\nnot signed", RefusedSince: since})
	if r.RecorderHeartbeat == nil || !r.RecorderHeartbeat.Equal(at) || r.RecorderHeartbeat.Location() != time.UTC {
		t.Errorf("heartbeat %v, want %v in UTC", r.RecorderHeartbeat, at)
	}
	f := r.SourceRefused
	if f == nil || f.Revision != "9a70926000000000000000000000000000000000" || f.Reason != "commit 9a70926: not signed" ||
		f.Since == nil || !f.Since.Equal(since) || f.Since.Location() != time.UTC {
		t.Fatalf("refusal %+v", f)
	}
	r.SetRecorder(works.RecorderState{At: at})
	if r.SourceRefused != nil {
		t.Errorf("refusal %+v after a state without one, want none", r.SourceRefused)
	}
	r.SetRecorder(works.RecorderState{})
	if r.RecorderHeartbeat != nil {
		t.Errorf("heartbeat %v from a zero state, want none", r.RecorderHeartbeat)
	}
}

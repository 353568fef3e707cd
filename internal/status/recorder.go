package status

import (
	"time"

	"github.com/propagit/propagit/internal/works"
)

// DefaultStaleAfter is the age from which the recording controller's
// heartbeat says it stopped recording: the default of `propagit status
// --stale-after`, and what the dashboard judges by.
const DefaultStaleAfter = 5 * time.Minute

// MaxHeartbeatSkew is how far ahead of the reader's clock a heartbeat may
// be and still count: clocks differ by seconds, not minutes.
const MaxHeartbeatSkew = time.Minute

// RecorderVerdict is what the recording controller's heartbeat says of it.
type RecorderVerdict int

const (
	// RecorderLive: the heartbeat is recent, or there is none (a store
	// kept by a controller that writes none, or by none at all).
	RecorderLive RecorderVerdict = iota
	// RecorderStale: the heartbeat is older than the stale age: the
	// controller stopped, or cannot read its source.
	RecorderStale
	// RecorderAhead: the heartbeat is more than MaxHeartbeatSkew in the
	// future (a clock far off, or not written by the controller): it
	// proves nothing about the controller now.
	RecorderAhead
)

// JudgeRecorder judges the recorder heartbeat hb (nil when the store keeps
// none) at now: the one rule of `propagit status --exit-code` and the
// dashboard. Anything but RecorderLive fails --exit-code.
func JudgeRecorder(hb *time.Time, now time.Time, staleAfter time.Duration) RecorderVerdict {
	switch {
	case hb == nil:
		return RecorderLive
	case hb.Sub(now) > MaxHeartbeatSkew:
		return RecorderAhead
	case now.Sub(*hb) >= staleAfter:
		return RecorderStale
	}
	return RecorderLive
}

// SetRecorder puts what the recording controller keeps with its heartbeat
// into r: the heartbeat (none when zero) and the source revision it
// refused, Sanitized.
func (r *Report) SetRecorder(state works.RecorderState) {
	r.RecorderHeartbeat, r.SourceRefused = nil, nil
	state = state.Sanitized()
	if !state.At.IsZero() {
		r.RecorderHeartbeat = &state.At
	}
	if state.Refused() {
		r.SourceRefused = &SourceRefusal{Revision: state.RefusedRevision, Reason: state.RefusedReason}
		if !state.RefusedSince.IsZero() {
			r.SourceRefused.Since = &state.RefusedSince
		}
	}
}

package memberstore

import (
	"context"
	"slices"
	"time"

	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

var _ works.RecorderHeartbeats = (*Store)(nil)

// PutRecorderHeartbeat implements works.RecorderHeartbeats: the recording
// controller's heartbeat goes to every tracked member's repository,
// parallel at a time, so a reader that reaches any of them can tell a live
// controller from a stopped one. A repository that cannot be written does
// not stop the others; the error names each that failed.
func (m *Store) PutRecorderHeartbeat(ctx context.Context, state works.RecorderState) error {
	return m.toEveryMember(func(st *gitstore.Store) error { return st.PutRecorderHeartbeat(ctx, state) })
}

// RecorderHeartbeat implements works.RecorderHeartbeats: the newest time
// that more than half of the tracked members' repositories have a heartbeat
// at or after, and the refused revision (with its reason and time) that
// more than half of them hold, none when no majority holds the same. Each
// member can rewrite its own repository, so one member forging a fresh
// heartbeat cannot hide a stopped controller (nor, alone, make a live one
// look stopped), and one member can neither invent a refusal nor hide one;
// a repository that cannot be read counts as having none. Zero when no
// majority has any.
func (m *Store) RecorderHeartbeat(ctx context.Context) (works.RecorderState, error) {
	clusters := m.trackedClusters()
	if len(clusters) == 0 {
		return works.RecorderState{}, nil
	}
	states := make([]works.RecorderState, len(clusters))
	for i, c := range clusters {
		st, err := m.store(c)
		if err != nil {
			return works.RecorderState{}, err
		}
		state, err := st.RecorderHeartbeat(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return works.RecorderState{}, ctx.Err()
			}
			m.log.Info("the recorder heartbeat of a works repository cannot be read", logging.KeyCluster, c, "error", err.Error())
			continue
		}
		states[i] = state
	}
	seen := make([]time.Time, len(states))
	for i, s := range states {
		seen[i] = s.At
	}
	slices.SortFunc(seen, func(a, b time.Time) int { return b.Compare(a) }) // newest first
	out := works.RecorderState{At: seen[len(seen)/2]}
	if out.At.IsZero() {
		return works.RecorderState{}, nil
	}
	for _, s := range states {
		if !s.Refused() {
			continue
		}
		held := 0
		for _, o := range states {
			if o.RefusedRevision == s.RefusedRevision && o.RefusedReason == s.RefusedReason && o.RefusedSince.Equal(s.RefusedSince) {
				held++
			}
		}
		if 2*held > len(states) {
			out.RefusedRevision, out.RefusedReason, out.RefusedSince = s.RefusedRevision, s.RefusedReason, s.RefusedSince
			break
		}
	}
	return out, nil
}

package memberstore

import (
	"bytes"
	"context"

	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

var _ works.RolloutStates = (*Store)(nil)

// PutRollouts implements works.RolloutStates: the record goes to every
// tracked member's repository (signed there when the store signs),
// parallel at a time, so a restarted controller resumes its rollouts. A
// repository that cannot be written does not stop the others; the error
// names each that failed.
func (m *Store) PutRollouts(ctx context.Context, data []byte) error {
	return m.toEveryMember(func(st *gitstore.Store) error { return st.PutRollouts(ctx, data) })
}

// Rollouts implements works.RolloutStates: the record that more than half
// of the tracked members' repositories hold, byte for byte. Each member
// can rewrite its own repository, so one member's forged record is
// outvoted (and refused outright when the store verifies its own
// signature); a repository that cannot be read, or whose record is
// refused, counts as holding none. Nil when no record has a majority: each
// rollout then starts again from what the clusters run.
func (m *Store) Rollouts(ctx context.Context) ([]byte, error) {
	clusters := m.trackedClusters()
	var held [][]byte
	votes := map[string]int{}
	for _, c := range clusters {
		st, err := m.store(c)
		if err != nil {
			return nil, err
		}
		data, err := st.Rollouts(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			m.log.Info("the rollouts record of a works repository is not counted", logging.KeyCluster, c, "error", err.Error())
			continue
		}
		if data == nil {
			continue
		}
		if votes[string(data)] == 0 {
			held = append(held, data)
		}
		votes[string(data)]++
	}
	for _, data := range held {
		if 2*votes[string(data)] > len(clusters) {
			return bytes.Clone(data), nil
		}
	}
	return nil, nil
}

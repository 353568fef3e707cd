package memberstore

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/propagit/propagit/internal/logging"
)

// recordNewest writes revision to the NewestRef of each of clusters'
// repositories that does not hold it yet as far as this store knows (it
// remembers what it wrote), parallel at a time.
func (m *Store) recordNewest(ctx context.Context, revision string, clusters []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, c := range clusters {
		m.mu.Lock()
		done := m.newest[c] == revision
		m.mu.Unlock()
		if done {
			continue
		}
		g.Go(func() error {
			st, err := m.store(c)
			if err != nil {
				return err
			}
			if err := st.PutNewest(gctx, revision); err != nil {
				return fmt.Errorf("failed to record the newest revision for %s: %w", c, err)
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			m.newest[c] = revision
			return nil
		})
	}
	return g.Wait()
}

// NewestRevision returns the revision that more than half of the tracked
// clusters' repositories record in NewestRef: every repository the
// controller reaches holds the same record, so one member rewriting its
// own repository cannot move it, only (in a fleet of two) leave it unknown.
// "" when no revision has such a majority. A repository that cannot be
// read counts as no record.
func (m *Store) NewestRevision(ctx context.Context) (string, error) {
	clusters := m.trackedClusters()
	votes := map[string]int{}
	for _, c := range clusters {
		g, err := m.store(c)
		if err != nil {
			return "", err
		}
		rev, err := g.ReadNewest(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			m.log.Info("the newest revision of a works repository cannot be read", logging.KeyCluster, c, "error", err.Error())
			continue
		}
		if rev != "" {
			votes[rev]++
		}
	}
	for rev, n := range votes {
		if 2*n > len(clusters) {
			return rev, nil
		}
	}
	return "", nil
}

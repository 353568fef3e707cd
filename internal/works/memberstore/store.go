package memberstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// Store keeps each member's Works and status in that member's own
// works repository (a RepoTemplate), so a member's credentials — a deploy
// key or token for its repository only — reach its own Work and status and
// nothing of other members, and its agent needs no access to the source
// repository. Each repository has a gitstore.Store's layout, holding one
// cluster. A member's status is read from its own repository only; a Work
// found in a repository but claiming another cluster is skipped with a log
// line, and status refs of other clusters there are never read.
//
// Repositories cannot be listed, so the store reaches the clusters it is
// told of (Track) and those it wrote. A member removed from Git while the
// controller was down keeps its Work: nothing is deleted by surprise.
type Store struct {
	tmpl *RepoTemplate
	opts gitstore.Options
	log  logr.Logger

	mu      sync.Mutex
	stores  map[string]*gitstore.Store
	tracked map[string]bool
	// newest is, by cluster, the revision this store last recorded in the
	// cluster's NewestRef.
	newest map[string]string
}

var (
	_ works.Store       = (*Store)(nil)
	_ works.StatusStore = (*Store)(nil)
)

// New returns a store of one repository per member, from
// tmpl (see ParseRepoTemplate); opts apply to every repository, URL and
// StatusURL aside, each with its own folder under opts.CacheDir.
func New(tmpl string, opts gitstore.Options, log logr.Logger) (*Store, error) {
	t, err := ParseRepoTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	return &Store{tmpl: t, opts: opts, log: log, stores: map[string]*gitstore.Store{}, tracked: map[string]bool{},
		newest: map[string]string{}}, nil
}

// Track adds clusters to those List, Put and NewestRevision reach: the
// controller tells it the clusters of each revision it loads.
func (m *Store) Track(clusters []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range clusters {
		m.tracked[c] = true
	}
}

func (m *Store) trackedClusters() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.tracked))
	for c := range m.tracked {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// store returns cluster's gitstore.Store, built on first use.
func (m *Store) store(cluster string) (*gitstore.Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.stores[cluster]; g != nil {
		return g, nil
	}
	url, err := m.tmpl.URL(cluster)
	if err != nil {
		return nil, err
	}
	opts := m.opts
	opts.URL, opts.StatusURL = url, ""
	if opts.CacheDir != "" {
		opts.CacheDir = filepath.Join(opts.CacheDir, cluster)
	}
	g, err := gitstore.New(opts)
	if err != nil {
		return nil, err
	}
	m.stores[cluster] = g
	return g, nil
}

// List returns the Work of each tracked cluster found in its repository,
// ordered by cluster.
func (m *Store) List(ctx context.Context) ([]*workv1alpha1.Work, error) {
	var out []*workv1alpha1.Work
	for _, c := range m.trackedClusters() {
		g, err := m.store(c)
		if err != nil {
			return nil, err
		}
		ws, err := g.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("failed to list the Works of %s in %s: %w", c, g.Remote(), err)
		}
		for _, w := range ws {
			if w.Spec.Cluster != c {
				m.log.Info("skipping a Work in another member's works repository", logging.KeyCluster, w.Spec.Cluster, "repository", g.Remote())
				continue
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// ListCluster returns cluster's Work from its repository; nil when none.
func (m *Store) ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	g, err := m.store(cluster)
	if err != nil {
		return nil, err
	}
	return g.ListCluster(ctx, cluster)
}

// parallel bounds the repositories one call reaches at once.
const parallel = 8

// toEveryMember runs put on the store of every tracked member, parallel
// at a time. A repository that cannot be written does not stop the
// others; the error names each that failed.
func (m *Store) toEveryMember(put func(*gitstore.Store) error) error {
	clusters := m.trackedClusters()
	errs := make([]error, len(clusters))
	var g errgroup.Group
	g.SetLimit(parallel)
	for i, c := range clusters {
		g.Go(func() error {
			st, err := m.store(c)
			if err == nil {
				err = put(st)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", c, err)
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// Put writes each Work to its cluster's repository, and removes the Work
// of each tracked cluster absent from ws. It returns the clusters whose
// Work changed. Repositories are written parallel at a time: a pass that
// changes nothing still lists each repository's refs once.
func (m *Store) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	byCluster := map[string][]*workv1alpha1.Work{}
	for _, w := range ws {
		if _, dup := byCluster[w.Spec.Cluster]; dup {
			return nil, fmt.Errorf("two works for cluster %s", w.Spec.Cluster)
		}
		byCluster[w.Spec.Cluster] = []*workv1alpha1.Work{w}
	}
	m.Track(slices.Collect(maps.Keys(byCluster)))
	var mu sync.Mutex
	var changed []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	clusters := m.trackedClusters()
	for _, c := range clusters {
		g.Go(func() error {
			st, err := m.store(c)
			if err != nil {
				return err
			}
			got, err := st.Put(gctx, revision, byCluster[c])
			if err != nil {
				return fmt.Errorf("failed to record the Work of %s: %w", c, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if slices.Contains(got, c) {
				changed = append(changed, c)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := m.recordNewest(ctx, revision, slices.Collect(maps.Keys(byCluster))); err != nil {
		return nil, err
	}
	m.mu.Lock()
	for _, c := range clusters {
		if byCluster[c] == nil {
			delete(m.tracked, c) // removed: nothing more to write there
		}
	}
	m.mu.Unlock()
	sort.Strings(changed)
	return changed, nil
}

// GetStatus reads cluster's status from cluster's repository only.
func (m *Store) GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	g, err := m.store(cluster)
	if err != nil {
		return nil, err
	}
	return g.GetStatus(ctx, cluster)
}

// PutStatus writes cluster's status to cluster's repository.
func (m *Store) PutStatus(ctx context.Context, cluster string, status *workv1alpha1.WorkStatus) error {
	g, err := m.store(cluster)
	if err != nil {
		return err
	}
	return g.PutStatus(ctx, cluster, status)
}

package workstest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// Store is a works store in memory, for the tests of packages that read or
// write Works through the works interfaces (the dashboard, the agent): a
// works.Store, a works.StatusStore and what a pull agent reads of its own
// Work (ListCluster). Safe for concurrent use. It keeps copies of what it
// is given and returns what it keeps, which callers must not modify (the
// real stores return fresh copies; reading without copying keeps the
// benchmarks over a large fleet about what they measure). A test that needs
// a store that fails or blocks writes its own.
type Store struct {
	mu           sync.Mutex
	works        map[string]*workv1alpha1.Work
	status       map[string]*workv1alpha1.WorkStatus
	newest       string
	statusWrites int
	beat         works.RecorderState
	beats        int
}

var (
	_ works.Store       = (*Store)(nil)
	_ works.StatusStore = (*Store)(nil)

	_ works.RecorderHeartbeats = (*Store)(nil)
)

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{works: map[string]*workv1alpha1.Work{}, status: map[string]*workv1alpha1.WorkStatus{}}
}

// List returns the Works, sorted by cluster.
func (s *Store) List(context.Context) ([]*workv1alpha1.Work, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*workv1alpha1.Work, 0, len(s.works))
	for _, c := range slices.Sorted(maps.Keys(s.works)) {
		out = append(out, s.works[c])
	}
	return out, nil
}

// ListCluster returns the Work of cluster, nil when there is none.
func (s *Store) ListCluster(_ context.Context, cluster string) (*workv1alpha1.Work, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.works[cluster], nil
}

// Put records ws as the stores do: the Works of clusters absent from ws
// are removed, a Work whose content did not change keeps the revision that
// last changed it, and revision becomes the newest when anything changed.
func (s *Store) Put(_ context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var changed []string
	keep := map[string]bool{}
	for _, w := range ws {
		c := w.Spec.Cluster
		keep[c] = true
		if old := s.works[c]; old != nil {
			same, err := works.SameContent(old, w)
			if err != nil {
				return nil, err
			}
			if same {
				continue
			}
		}
		s.works[c] = w.DeepCopy()
		changed = append(changed, c)
	}
	for c := range s.works {
		if !keep[c] {
			delete(s.works, c)
			changed = append(changed, c)
		}
	}
	if len(changed) > 0 {
		s.newest = revision
	}
	slices.Sort(changed)
	return changed, nil
}

// Record stores w as its cluster's Work and its source revision as the
// newest, leaving the other clusters' Works: a Put that changes one
// cluster, for a test that builds a fleet cluster by cluster.
func (s *Store) Record(w *workv1alpha1.Work) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.works[w.Spec.Cluster] = w.DeepCopy()
	s.newest = w.Spec.SourceRevision
}

// NewestRevision returns the revision of the last Put or Record that
// changed a Work.
func (s *Store) NewestRevision(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newest, nil
}

// GetStatus returns the status last written for cluster; a zero status
// when none.
func (s *Store) GetStatus(_ context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.status[cluster]; st != nil {
		return st, nil
	}
	return &workv1alpha1.WorkStatus{}, nil
}

// PutStatus records st as cluster's status.
func (s *Store) PutStatus(_ context.Context, cluster string, st *workv1alpha1.WorkStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[cluster] = st.DeepCopy()
	s.statusWrites++
	return nil
}

// StatusWrites returns how many times PutStatus was called.
func (s *Store) StatusWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusWrites
}

// PutRecorderHeartbeat keeps state as the recorder heartbeat, Sanitized
// as the real stores keep it.
func (s *Store) PutRecorderHeartbeat(_ context.Context, state works.RecorderState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beat = state.Sanitized()
	s.beats++
	return nil
}

// RecorderHeartbeat returns the last heartbeat kept; zero when none.
func (s *Store) RecorderHeartbeat(context.Context) (works.RecorderState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beat, nil
}

// RecorderHeartbeatWrites returns how many times PutRecorderHeartbeat was
// called.
func (s *Store) RecorderHeartbeatWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beats
}

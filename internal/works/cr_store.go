package works

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// CRStore keeps one Work custom resource per cluster, named after the
// cluster, in one namespace of a hub; status goes to the status
// subresource. The client's scheme must know workv1alpha1.
type CRStore struct {
	c                 client.Client
	namespace         string
	heartbeatInterval time.Duration
	now               func() time.Time
}

// CROption configures a CRStore.
type CROption func(*CRStore)

// WithHeartbeatInterval writes a heartbeat-only status change once the
// stored heartbeat is d old; see StatusChanged. Without it heartbeat-only
// changes are never written.
func WithHeartbeatInterval(d time.Duration) CROption {
	return func(s *CRStore) { s.heartbeatInterval = d }
}

var (
	_ Store       = (*CRStore)(nil)
	_ StatusStore = (*CRStore)(nil)
)

// NewCRStore returns a store of the Works in namespace.
func NewCRStore(c client.Client, namespace string, opts ...CROption) *CRStore {
	s := &CRStore{c: c, namespace: namespace, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// List returns the managed Works (spec only), ordered by cluster.
func (s *CRStore) List(ctx context.Context) ([]*workv1alpha1.Work, error) {
	items, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*workv1alpha1.Work, 0, len(items))
	for i := range items {
		out = append(out, specOnly(&items[i]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Cluster < out[j].Spec.Cluster })
	return out, nil
}

// ListCluster returns the Work of cluster (spec only), or nil when there is
// none.
func (s *CRStore) ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: cluster}, w)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get Work %s/%s: %w", s.namespace, cluster, err)
	}
	return specOnly(w), nil
}

func (s *CRStore) list(ctx context.Context) ([]workv1alpha1.Work, error) {
	var l workv1alpha1.WorkList
	if err := s.c.List(ctx, &l, client.InNamespace(s.namespace), client.HasLabels{workv1alpha1.LabelCluster}); err != nil {
		return nil, fmt.Errorf("failed to list Works in %s: %w", s.namespace, err)
	}
	return l.Items, nil
}

// specOnly returns a copy of w without status and server fields other than
// name, namespace, labels and propagit's annotations.
func specOnly(w *workv1alpha1.Work) *workv1alpha1.Work {
	out := &workv1alpha1.Work{Spec: w.Spec}
	out.APIVersion = workv1alpha1.GroupVersion.String()
	out.Kind = "Work"
	out.Name, out.Namespace, out.Labels, out.Annotations = w.Name, w.Namespace, w.Labels, ownAnnotations(w.Annotations)
	return out.DeepCopy()
}

// Put creates the Work of each cluster, updates the spec of those whose
// content changed (the source revision alone does not count, as in
// GitStore.Put) and deletes the managed Works of clusters absent from ws.
// It returns the clusters whose Work was created, updated or deleted.
func (s *CRStore) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	existing, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*workv1alpha1.Work, len(existing))
	seq := int64(0)
	for i := range existing {
		byName[existing[i].Name] = &existing[i]
		seq = max(seq, recordedSequence(&existing[i]))
	}
	seq++ // this Put's number, on every Work it writes
	var changed []string
	seen := map[string]bool{}
	for _, w := range ws {
		cluster := w.Spec.Cluster
		if err := validateCluster(cluster); err != nil {
			return nil, err
		}
		if seen[cluster] {
			return nil, fmt.Errorf("two works for cluster %s", cluster)
		}
		seen[cluster] = true
		wrote, err := s.putOne(ctx, revision, seq, w, byName[cluster])
		if err != nil {
			return nil, err
		}
		if wrote {
			changed = append(changed, cluster)
		}
	}
	for name, old := range byName {
		if seen[name] {
			continue
		}
		err := s.c.Delete(ctx, old, client.Preconditions{UID: &old.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("failed to delete Work %s/%s: %w", s.namespace, name, err)
		}
		changed = append(changed, name)
	}
	sort.Strings(changed)
	return changed, nil
}

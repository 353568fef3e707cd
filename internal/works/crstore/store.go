package crstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// Store keeps one Work custom resource per cluster, named after the
// cluster, in that cluster's own hub namespace
// (workv1alpha1.MemberNamespace: propagit-member-<cluster>), so that a
// Role in that namespace gives a pull agent its own Work and nothing else;
// status goes to the status subresource. Works that an earlier version
// kept in one shared namespace (legacy) are moved to their member's
// namespace, status included, by the next Put. One CR store per hub: the
// member namespaces are not per installation. The client's scheme must
// know workv1alpha1 and corev1.
type Store struct {
	c                 client.Client
	legacy            string
	heartbeatInterval time.Duration
	now               func() time.Time
}

// Option configures a Store.
type Option func(*Store)

// WithHeartbeatInterval writes a heartbeat-only status change once the
// stored heartbeat is d old; see StatusChanged. Without it heartbeat-only
// changes are never written.
func WithHeartbeatInterval(d time.Duration) Option {
	return func(s *Store) { s.heartbeatInterval = d }
}

var (
	_ works.Store       = (*Store)(nil)
	_ works.StatusStore = (*Store)(nil)
)

// New returns a store of the Works in the member namespaces.
// legacy is the namespace Works were kept in before (the controller's
// own): its labelled Works are read, then moved by Put ("" for none).
func New(c client.Client, legacy string, opts ...Option) *Store {
	s := &Store{c: c, legacy: legacy, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// List returns the managed Works (spec only), ordered by cluster.
func (s *Store) List(ctx context.Context) ([]*workv1alpha1.Work, error) {
	items, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*workv1alpha1.Work, 0, len(items))
	for _, w := range items {
		out = append(out, specOnly(w))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Cluster < out[j].Spec.Cluster })
	return out, nil
}

// ListCluster returns the Work of cluster (spec only), or nil when there is
// none. It reads cluster's namespace only: all a pull agent may read.
func (s *Store) ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	w, err := s.get(ctx, cluster)
	if w == nil || err != nil {
		return nil, err
	}
	return specOnly(w), nil
}

// get returns cluster's Work from its member namespace; nil when absent.
func (s *Store) get(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return nil, err
	}
	w := &workv1alpha1.Work{}
	err = s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, w)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get Work %s/%s: %w", ns, cluster, err)
	}
	return s.assemble(ctx, w, nil)
}

// list returns the managed Works by cluster: the one in the cluster's
// member namespace, else one left in the legacy namespace. A labelled Work
// anywhere else (another namespace, or a name that is not its cluster's)
// is not propagit's record and is ignored.
func (s *Store) list(ctx context.Context) (map[string]*workv1alpha1.Work, error) {
	out, _, err := s.listAll(ctx)
	return out, err
}

// listAll is list, plus the legacy Works a Work in their member namespace
// shadows: left by a move that stopped before its delete.
func (s *Store) listAll(ctx context.Context) (map[string]*workv1alpha1.Work, []*workv1alpha1.Work, error) {
	var l workv1alpha1.WorkList
	if err := s.c.List(ctx, &l, client.HasLabels{workv1alpha1.LabelCluster}); err != nil {
		return nil, nil, fmt.Errorf("failed to list Works: %w", err)
	}
	out := map[string]*workv1alpha1.Work{}
	var legacy []*workv1alpha1.Work
	for i := range l.Items {
		w := &l.Items[i]
		cluster := w.Labels[workv1alpha1.LabelCluster]
		ns, err := workv1alpha1.MemberNamespace(cluster)
		if err != nil || w.Name != cluster {
			continue
		}
		switch w.Namespace {
		case ns:
			out[cluster] = w
		case s.legacy:
			legacy = append(legacy, w)
		}
	}
	var shadowed []*workv1alpha1.Work
	for _, w := range legacy {
		if out[w.Name] == nil {
			out[w.Name] = w
		} else {
			shadowed = append(shadowed, w)
		}
	}
	for cluster, w := range out {
		whole, err := s.assemble(ctx, w, nil)
		if err != nil {
			return nil, nil, err
		}
		out[cluster] = whole
	}
	return out, shadowed, nil
}

// specOnly returns a copy of w without status and server fields other than
// name, namespace, labels and propagit's annotations.
func specOnly(w *workv1alpha1.Work) *workv1alpha1.Work {
	out := &workv1alpha1.Work{Spec: w.Spec}
	out.APIVersion = workv1alpha1.GroupVersion.String()
	out.Kind = "Work"
	out.Name, out.Namespace, out.Labels, out.Annotations = w.Name, w.Namespace, w.Labels, works.OwnAnnotations(w.Annotations)
	return out.DeepCopy()
}

// Put creates the Work of each cluster, updates the spec of those whose
// content changed (the source revision alone does not count, as in
// GitStore.Put) and deletes the managed Works of clusters absent from ws.
// A cluster's namespace is created when missing, and its Work still in
// the legacy namespace is moved there first. It returns the clusters whose
// Work was created, updated or deleted; a move alone is no change.
func (s *Store) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	byName, shadowed, err := s.listAll(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range shadowed {
		if err := s.c.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("failed to delete Work %s/%s, already moved to its member's namespace: %w", w.Namespace, w.Name, err)
		}
	}
	seq := int64(0)
	for _, w := range byName {
		seq = max(seq, recordedSequence(w))
	}
	seq++ // this Put's number, on every Work it writes
	var changed []string
	seen := map[string]bool{}
	for _, w := range ws {
		cluster := w.Spec.Cluster
		if err := works.ValidateCluster(cluster); err != nil {
			return nil, err
		}
		if seen[cluster] {
			return nil, fmt.Errorf("two works for cluster %s", cluster)
		}
		seen[cluster] = true
		old, err := s.prepare(ctx, cluster, byName[cluster])
		if err != nil {
			return nil, err
		}
		wrote, err := s.putOne(ctx, revision, seq, w, old)
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
			return nil, fmt.Errorf("failed to delete Work %s/%s: %w", old.Namespace, name, err)
		}
		if err := s.pruneParts(ctx, old.Namespace, name, 1); err != nil {
			return nil, err
		}
		changed = append(changed, name)
	}
	sort.Strings(changed)
	return changed, nil
}

// prepare makes sure cluster's namespace exists and returns its Work
// there: old itself, or old moved from the legacy namespace.
func (s *Store) prepare(ctx context.Context, cluster string, old *workv1alpha1.Work) (*workv1alpha1.Work, error) {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return nil, err
	}
	if old != nil && old.Namespace == ns {
		return old, nil
	}
	if err := s.ensureNamespace(ctx, ns, cluster); err != nil {
		return nil, err
	}
	if old == nil {
		return nil, nil
	}
	return s.move(ctx, old, ns)
}

// ensureNamespace creates ns, labelled with its cluster, unless it exists.
func (s *Store) ensureNamespace(ctx context.Context, ns, cluster string) error {
	err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{workv1alpha1.LabelCluster: cluster}}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create Namespace %s for the Work of %s: %w", ns, cluster, err)
	}
	return nil
}

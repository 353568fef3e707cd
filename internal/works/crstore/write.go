package crstore

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// putOne creates w when old is nil, or updates old's spec and propagit's
// annotations when its content differs (old is whole: assembled from its
// parts), and reports whether it wrote. A Work too large for one custom
// resource is split (split): its parts are written first, then the first
// part, then the parts it no longer has are deleted. A conflict rereads the
// Work and compares again.
func (s *Store) putOne(ctx context.Context, revision string, seq int64, w, old *workv1alpha1.Work) (bool, error) {
	spec := *w.Spec.DeepCopy()
	if spec.SourceRevision == "" {
		spec.SourceRevision = revision
	}
	ann := works.OwnAnnotations(w.Annotations)
	if old != nil {
		if same, err := works.SameContent(old, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: spec}); err != nil || same {
			return false, err
		}
	}
	ns, err := workv1alpha1.MemberNamespace(spec.Cluster)
	if err != nil {
		return false, err
	}
	first, parts, err := split(&workv1alpha1.Work{Spec: spec})
	if err != nil {
		return false, err
	}
	if err := s.putParts(ctx, ns, spec.Cluster, parts); err != nil {
		return false, err
	}
	stamped := maps.Clone(ann)
	if stamped == nil {
		stamped = map[string]string{}
	}
	maps.Copy(stamped, first.Annotations)
	stamped[workv1alpha1.AnnotationRecordedSequence] = strconv.FormatInt(seq, 10)
	spec = first.Spec
	if old == nil {
		if err := s.create(ctx, spec, stamped); err != nil {
			return false, err
		}
		return true, s.pruneParts(ctx, ns, spec.Cluster, len(parts)+1)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		upd := old.DeepCopy()
		upd.Spec = spec
		upd.Annotations = withOwnAnnotations(upd.Annotations, stamped)
		err := s.c.Update(ctx, upd)
		if apierrors.IsConflict(err) {
			fresh := &workv1alpha1.Work{}
			if gerr := s.c.Get(ctx, client.ObjectKeyFromObject(old), fresh); gerr != nil {
				return gerr
			}
			old = fresh
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("failed to update Work %s/%s: %w", old.Namespace, spec.Cluster, err)
	}
	return true, s.pruneParts(ctx, ns, spec.Cluster, len(parts)+1)
}

// withOwnAnnotations returns all with propagit's annotations replaced by
// own; those other tools set stay.
func withOwnAnnotations(all, own map[string]string) map[string]string {
	out := maps.Clone(own)
	for k, v := range all {
		if !strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func (s *Store) create(ctx context.Context, spec workv1alpha1.WorkSpec, ann map[string]string) error {
	ns, err := workv1alpha1.MemberNamespace(spec.Cluster)
	if err != nil {
		return err
	}
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Cluster, Namespace: ns,
			Labels: map[string]string{workv1alpha1.LabelCluster: spec.Cluster}, Annotations: ann},
		Spec: spec,
	}
	err = s.c.Create(ctx, w)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create Work %s/%s: a Work without the %s label exists; propagit does not take it over",
			ns, spec.Cluster, workv1alpha1.LabelCluster)
	}
	if err != nil {
		return fmt.Errorf("failed to create Work %s/%s: %w", ns, spec.Cluster, err)
	}
	return nil
}

// move copies old, a Work of the legacy namespace, to ns with its status,
// then deletes old, and returns the copy. Only the record moves: deleting
// a Work custom resource deletes nothing on a member, and an agent reading
// the old namespace sees no Work and keeps what it applied.
func (s *Store) move(ctx context.Context, old *workv1alpha1.Work, ns string) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: ns,
		Labels: maps.Clone(old.Labels), Annotations: maps.Clone(old.Annotations)}, Spec: *old.Spec.DeepCopy()}
	if err := s.c.Create(ctx, w); err != nil {
		return nil, fmt.Errorf("failed to move Work %s/%s to namespace %s: %w", old.Namespace, old.Name, ns, err)
	}
	w.Status = *old.Status.DeepCopy()
	if err := s.c.Status().Update(ctx, w); err != nil {
		return nil, fmt.Errorf("failed to move the status of Work %s/%s to namespace %s: %w", old.Namespace, old.Name, ns, err)
	}
	if err := s.c.Delete(ctx, old, client.Preconditions{UID: &old.UID}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to delete Work %s/%s, moved to namespace %s: %w", old.Namespace, old.Name, ns, err)
	}
	return w, nil
}

// GetStatus returns the status of cluster's Work, read from cluster's
// namespace only; the zero status when there is no such Work.
func (s *Store) GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return nil, err
	}
	w := &workv1alpha1.Work{} // the first part holds the status: its parts need not be read
	err = s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, w)
	if apierrors.IsNotFound(err) {
		return &workv1alpha1.WorkStatus{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get Work %s/%s: %w", ns, cluster, err)
	}
	st, err := unpack(&w.Status)
	if err != nil {
		return nil, fmt.Errorf("Work %s/%s: %w", ns, cluster, err)
	}
	return st.DeepCopy(), nil
}

// PutStatus writes status to the status subresource of cluster's Work when
// it is a transition from the stored status (see StatusChanged). The Work
// must exist in cluster's namespace. A conflict rereads the Work and compares again.
func (s *Store) PutStatus(ctx context.Context, cluster string, status *workv1alpha1.WorkStatus) error {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return err
	}
	next := works.Normalize(status)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &workv1alpha1.Work{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, w); err != nil {
			return err
		}
		stored, err := unpack(&w.Status)
		if err != nil {
			stored = &workv1alpha1.WorkStatus{} // overwrite an unreadable record
		}
		if !works.StatusChanged(stored, next, s.heartbeatInterval) {
			return nil
		}
		packed, err := pack(works.Settle(stored, next, s.now()))
		if err != nil {
			return err
		}
		w.Status = *packed
		return s.c.Status().Update(ctx, w)
	})
	if err != nil {
		return fmt.Errorf("failed to write the status of Work %s/%s: %w", ns, cluster, err)
	}
	return nil
}

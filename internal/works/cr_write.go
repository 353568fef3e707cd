package works

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
)

// putOne creates w when old is nil, or updates old's spec and propagit's
// annotations when its content differs, and reports whether it wrote. A
// conflict rereads the Work and compares again.
func (s *CRStore) putOne(ctx context.Context, revision string, seq int64, w, old *workv1alpha1.Work) (bool, error) {
	spec := *w.Spec.DeepCopy()
	if spec.SourceRevision == "" {
		spec.SourceRevision = revision
	}
	ann := ownAnnotations(w.Annotations)
	stamped := maps.Clone(ann)
	if stamped == nil {
		stamped = map[string]string{}
	}
	stamped[workv1alpha1.AnnotationRecordedSequence] = strconv.FormatInt(seq, 10)
	if old == nil {
		return true, s.create(ctx, spec, stamped)
	}
	wrote := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if same, err := sameContent(old, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: spec}); err != nil || same {
			return err
		}
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
		wrote = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("failed to update Work %s/%s: %w", s.namespace, spec.Cluster, err)
	}
	return wrote, nil
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

func (s *CRStore) create(ctx context.Context, spec workv1alpha1.WorkSpec, ann map[string]string) error {
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Cluster, Namespace: s.namespace,
			Labels: map[string]string{workv1alpha1.LabelCluster: spec.Cluster}, Annotations: ann},
		Spec: spec,
	}
	err := s.c.Create(ctx, w)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create Work %s/%s: a Work without the %s label exists; propagit does not take it over",
			s.namespace, spec.Cluster, workv1alpha1.LabelCluster)
	}
	if err != nil {
		return fmt.Errorf("failed to create Work %s/%s: %w", s.namespace, spec.Cluster, err)
	}
	return nil
}

// GetStatus returns the status of cluster's Work; the zero status when
// there is no such Work.
func (s *CRStore) GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	w := &workv1alpha1.Work{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: cluster}, w)
	if apierrors.IsNotFound(err) {
		return &workv1alpha1.WorkStatus{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get Work %s/%s: %w", s.namespace, cluster, err)
	}
	return w.Status.DeepCopy(), nil
}

// PutStatus writes status to the status subresource of cluster's Work when
// it is a transition from the stored status (see StatusChanged). The Work
// must exist. A conflict rereads the Work and compares again.
func (s *CRStore) PutStatus(ctx context.Context, cluster string, status *workv1alpha1.WorkStatus) error {
	next := Normalize(status)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &workv1alpha1.Work{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: cluster}, w); err != nil {
			return err
		}
		if !StatusChanged(&w.Status, next, s.heartbeatInterval) {
			return nil
		}
		w.Status = *settle(&w.Status, next, s.now())
		return s.c.Status().Update(ctx, w)
	})
	if err != nil {
		return fmt.Errorf("failed to write the status of Work %s/%s: %w", s.namespace, cluster, err)
	}
	return nil
}

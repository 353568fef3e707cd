package crstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// maxChunkBytes bounds the manifests one Work custom resource holds. etcd
// refuses objects over 1.5 MiB; the rest of the object (metadata, and the
// status on the first part) needs room too.
const maxChunkBytes = 1 << 20

// partName is the name of the i-th extra part of cluster's Work.
func partName(cluster string, i int) string { return cluster + "-part-" + strconv.Itoa(i) }

// split returns w as it is when its manifests fit one Work custom resource,
// else w with the first chunk of manifests and AnnotationChunks, and the
// other chunks as parts named by partName, all with the digest of the whole.
// A single manifest over maxChunkBytes is an error.
func split(w *workv1alpha1.Work) (*workv1alpha1.Work, []*workv1alpha1.Work, error) {
	var chunks [][]runtime.RawExtension
	var cur []runtime.RawExtension
	size := 0
	for _, m := range w.Spec.Manifests {
		if len(m.Raw) > maxChunkBytes {
			return nil, nil, fmt.Errorf("an object of cluster %s's Work is %d bytes, more than a Work custom resource can hold (%d)", w.Spec.Cluster, len(m.Raw), maxChunkBytes)
		}
		if size+len(m.Raw) > maxChunkBytes && len(cur) > 0 {
			chunks, cur, size = append(chunks, cur), nil, 0
		}
		cur = append(cur, m)
		size += len(m.Raw)
	}
	chunks = append(chunks, cur)
	if len(chunks) == 1 {
		return w, nil, nil
	}
	digest := workv1alpha1.Digest(w)
	first := w.DeepCopy()
	first.Spec.Manifests = chunks[0]
	if first.Annotations == nil {
		first.Annotations = map[string]string{}
	}
	first.Annotations[workv1alpha1.AnnotationChunks] = strconv.Itoa(len(chunks))
	first.Annotations[workv1alpha1.AnnotationManifestsDigest] = digest
	parts := make([]*workv1alpha1.Work, 0, len(chunks)-1)
	for i, c := range chunks[1:] {
		parts = append(parts, &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Name: partName(w.Spec.Cluster, i+1),
				Labels: map[string]string{workv1alpha1.LabelChunkOf: w.Spec.Cluster},
				Annotations: map[string]string{workv1alpha1.AnnotationChunk: strconv.Itoa(i + 1),
					workv1alpha1.AnnotationManifestsDigest: digest}},
			Spec: workv1alpha1.WorkSpec{Cluster: w.Spec.Cluster, SourceRevision: w.Spec.SourceRevision,
				FormatVersion: w.Spec.FormatVersion, Manifests: c},
		})
	}
	return first, parts, nil
}

// assemble returns the whole Work of a first part w, reading its other
// parts from parts (by index) or, when parts is nil, from w's namespace. A
// Work that is not split is returned as it is. Parts of another write than
// w's (a write in progress) are an error: the caller reads again later.
func (s *Store) assemble(ctx context.Context, w *workv1alpha1.Work, parts map[int]*workv1alpha1.Work) (*workv1alpha1.Work, error) {
	n, _ := strconv.Atoi(w.Annotations[workv1alpha1.AnnotationChunks])
	if n <= 1 {
		return w, nil
	}
	if parts == nil {
		var err error
		if parts, err = s.parts(ctx, w.Namespace, w.Spec.Cluster); err != nil {
			return nil, err
		}
	}
	digest := w.Annotations[workv1alpha1.AnnotationManifestsDigest]
	whole := w.DeepCopy()
	for i := 1; i < n; i++ {
		p := parts[i]
		if p == nil || p.Annotations[workv1alpha1.AnnotationManifestsDigest] != digest {
			return nil, fmt.Errorf("Work %s/%s is being rewritten (part %d of %d is missing or of another write); it is read again next time", w.Namespace, w.Name, i, n)
		}
		whole.Spec.Manifests = append(whole.Spec.Manifests, p.Spec.Manifests...)
	}
	if workv1alpha1.Digest(whole) != digest {
		return nil, fmt.Errorf("Work %s/%s: its %d parts do not add up to the digest they carry", w.Namespace, w.Name, n)
	}
	delete(whole.Annotations, workv1alpha1.AnnotationChunks)
	delete(whole.Annotations, workv1alpha1.AnnotationManifestsDigest)
	return whole, nil
}

// parts returns the extra parts of cluster's Work in ns, by index.
func (s *Store) parts(ctx context.Context, ns, cluster string) (map[int]*workv1alpha1.Work, error) {
	var l workv1alpha1.WorkList
	if err := s.c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{workv1alpha1.LabelChunkOf: cluster}); err != nil {
		return nil, fmt.Errorf("failed to list the parts of Work %s/%s: %w", ns, cluster, err)
	}
	out := map[int]*workv1alpha1.Work{}
	for i := range l.Items {
		p := &l.Items[i]
		if idx, err := strconv.Atoi(p.Annotations[workv1alpha1.AnnotationChunk]); err == nil && p.Name == partName(cluster, idx) {
			out[idx] = p
		}
	}
	return out, nil
}

// putParts writes the parts of a split Work before its first part, so a
// reader that sees the new first part finds its parts; then deletes the
// parts the Work no longer has.
func (s *Store) putParts(ctx context.Context, ns, cluster string, parts []*workv1alpha1.Work) error {
	existing, err := s.parts(ctx, ns, cluster)
	if err != nil {
		return err
	}
	for i, p := range parts {
		p.Namespace = ns
		old := existing[i+1]
		if old == nil {
			if err := s.c.Create(ctx, p); err != nil {
				return fmt.Errorf("failed to create Work part %s/%s: %w", ns, p.Name, err)
			}
			continue
		}
		if old.Annotations[workv1alpha1.AnnotationManifestsDigest] == p.Annotations[workv1alpha1.AnnotationManifestsDigest] &&
			slices.EqualFunc(old.Spec.Manifests, p.Spec.Manifests, func(a, b runtime.RawExtension) bool { return string(a.Raw) == string(b.Raw) }) {
			continue
		}
		upd := old.DeepCopy()
		upd.Labels, upd.Annotations, upd.Spec = p.Labels, p.Annotations, p.Spec
		if err := s.c.Update(ctx, upd); err != nil {
			return fmt.Errorf("failed to update Work part %s/%s: %w", ns, p.Name, err)
		}
	}
	return nil
}

// pruneParts deletes the parts of cluster's Work from index keep on.
func (s *Store) pruneParts(ctx context.Context, ns, cluster string, keep int) error {
	existing, err := s.parts(ctx, ns, cluster)
	if err != nil {
		return err
	}
	for i, p := range existing {
		if i < keep {
			continue
		}
		if err := s.c.Delete(ctx, p, client.Preconditions{UID: &p.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete Work part %s/%s: %w", ns, p.Name, err)
		}
	}
	return nil
}

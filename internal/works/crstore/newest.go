package crstore

import (
	"context"
	"strconv"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// NewestRevision returns the source revision of the Work the newest Put
// wrote (the highest AnnotationRecordedSequence). "" when there are no
// Works.
func (s *Store) NewestRevision(ctx context.Context) (string, error) {
	items, err := s.list(ctx)
	if err != nil {
		return "", err
	}
	best, rev := int64(-1), ""
	for _, w := range items {
		if seq := recordedSequence(w); seq > best {
			best, rev = seq, w.Spec.SourceRevision
		}
	}
	return rev, nil
}

// recordedSequence is the Put sequence number recorded on w; 0 when none.
func recordedSequence(w *workv1alpha1.Work) int64 {
	n, _ := strconv.ParseInt(w.Annotations[workv1alpha1.AnnotationRecordedSequence], 10, 64)
	return n
}

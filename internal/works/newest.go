package works

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// A Work keeps the source revision that last changed it, so the Works of
// one fleet carry several revisions and none of them says which is newest.
// Each store knows the newest from its own history: the work branch's tip
// commit, or when each Work custom resource was last written.

// sourceRevisionTrailer names the source revision in a work branch commit.
const sourceRevisionTrailer = "Source-Revision: "

// NewestRevision returns the source revision of the newest Put that
// changed anything: the Source-Revision trailer of the work branch's tip.
// "" when the branch does not exist.
func (g *GitStore) NewestRevision(ctx context.Context) (string, error) {
	rev, _, err := g.newest(ctx)
	return rev, err
}

// newest is NewestRevision and when its commit was made (zero: none).
func (g *GitStore) newest(ctx context.Context) (string, time.Time, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tip, err := g.fetchTip(ctx, &g.works, &g.worksTip)
	if err != nil || tip.IsZero() {
		return "", time.Time{}, err
	}
	c, err := object.GetCommit(g.works, tip)
	if err != nil {
		return "", time.Time{}, err
	}
	for _, line := range strings.Split(c.Message, "\n") {
		if rev, ok := strings.CutPrefix(line, sourceRevisionTrailer); ok {
			return strings.TrimSpace(rev), c.Committer.When, nil
		}
	}
	return "", c.Committer.When, nil
}

// NewestRevision returns the source revision of the Work the newest Put
// wrote (the highest AnnotationRecordedSequence). "" when there are no
// Works.
func (s *CRStore) NewestRevision(ctx context.Context) (string, error) {
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

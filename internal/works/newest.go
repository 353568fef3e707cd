package works

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/sync/errgroup"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/logging"
)

// A Work keeps the source revision that last changed it, so the Works of
// one fleet carry several revisions and none of them says which is newest.
// Each store knows the newest from its own history: the work branch's tip
// commit, or when each Work custom resource was last written (an agent
// writes only the status subresource), or with per-member repositories,
// which members write too, what most of them record (NewestRef).

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

// NewestRef holds, in each member's works repository, the controller's
// record of its newest Put: one commit, with an empty tree and no parent,
// whose Source-Revision trailer names the revision, force-pushed to every
// tracked repository when the revision changes. A member's work branch
// carries the revision that last changed that member's Work, and a member
// can write anything in its own repository; the newest revision of a fleet
// of per-member repositories is therefore the one most repositories'
// records agree on, never what one repository claims.
const NewestRef = plumbing.ReferenceName("refs/propagit/newest")

// maxRevision bounds a recorded revision: a SHA-1 or SHA-256 hex name is
// 40 or 64 characters.
const maxRevision = 64

// putNewest force-pushes a record of revision to NewestRef.
func (g *GitStore) putNewest(ctx context.Context, revision string) error {
	s := memory.NewStorage()
	tree, err := gitrepo.WriteTree(s, nil)
	if err != nil {
		return err
	}
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: g.now()}
	msg := "propagit: newest " + shortRev(revision) + "\n\n" + sourceRevisionTrailer + revision + "\n"
	commit, err := gitrepo.WriteObject(s, &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree})
	if err != nil {
		return fmt.Errorf("failed to store the newest revision: %w", err)
	}
	return g.pushRef(ctx, g.worksEP, s, NewestRef, NewestRef, commit, true)
}

// readNewest returns the revision NewestRef records; "" when there is no
// record or it names no revision.
func (g *GitStore) readNewest(ctx context.Context) (string, error) {
	s := memory.NewStorage()
	tip, err := g.fetch(ctx, g.worksEP, s, NewestRef, NewestRef, 1)
	if err != nil || tip.IsZero() {
		return "", err
	}
	c, err := object.GetCommit(s, tip)
	if err != nil {
		return "", fmt.Errorf("failed to read the newest revision in %s: %w", g.worksEP.Safe, err)
	}
	return trailerRevision(c.Message), nil
}

// trailerRevision returns the revision a Source-Revision line names, if it
// is at most maxRevision letters and digits (an object name is hex); ""
// otherwise.
func trailerRevision(message string) string {
	for _, line := range strings.Split(message, "\n") {
		rev, ok := strings.CutPrefix(line, sourceRevisionTrailer)
		if !ok {
			continue
		}
		rev = strings.TrimSpace(rev)
		if len(rev) == 0 || len(rev) > maxRevision || strings.Trim(rev, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return ""
		}
		return rev
	}
	return ""
}

// recordNewest writes revision to the NewestRef of each of clusters'
// repositories that does not hold it yet as far as this store knows (it
// remembers what it wrote), parallel at a time.
func (m *MemberGitStore) recordNewest(ctx context.Context, revision string, clusters []string) error {
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
			if err := st.putNewest(gctx, revision); err != nil {
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
func (m *MemberGitStore) NewestRevision(ctx context.Context) (string, error) {
	clusters := m.trackedClusters()
	votes := map[string]int{}
	for _, c := range clusters {
		g, err := m.store(c)
		if err != nil {
			return "", err
		}
		rev, err := g.readNewest(ctx)
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

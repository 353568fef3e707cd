package gitstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
)

// A Work keeps the source revision that last changed it, so the Works of
// one fleet carry several revisions and none of them says which is newest.
// Each store knows the newest from its own history: the work branch's tip
// commit, or when each Work custom resource was last written (an agent
// writes only the status subresource), or with per-member repositories,
// which members write too, what most of them record (NewestRef).

// SourceRevisionTrailer names the source revision in a work branch commit.
const SourceRevisionTrailer = "Source-Revision: "

// NewestRevision returns the source revision of the newest Put that
// changed anything: the Source-Revision trailer of the work branch's tip.
// "" when the branch does not exist.
func (g *Store) NewestRevision(ctx context.Context) (string, error) {
	rev, _, err := g.newest(ctx)
	return rev, err
}

// newest is NewestRevision and when its commit was made (zero: none).
func (g *Store) newest(ctx context.Context) (string, time.Time, error) {
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
		if rev, ok := strings.CutPrefix(line, SourceRevisionTrailer); ok {
			return strings.TrimSpace(rev), c.Committer.When, nil
		}
	}
	return "", c.Committer.When, nil
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

// PutNewest force-pushes a record of revision to NewestRef.
func (g *Store) PutNewest(ctx context.Context, revision string) error {
	s := memory.NewStorage()
	tree, err := gitrepo.WriteTree(s, nil)
	if err != nil {
		return err
	}
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: g.now()}
	msg := "propagit: newest " + workv1alpha1.DisplayRevision(revision) + "\n\n" + SourceRevisionTrailer + revision + "\n"
	commit, err := g.writeSigned(s, &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree})
	if err != nil {
		return fmt.Errorf("failed to store the newest revision: %w", err)
	}
	return g.pushRef(ctx, g.worksEP, s, NewestRef, NewestRef, commit, true)
}

// ReadNewest returns the revision NewestRef records; "" when there is no
// record or it names no revision.
func (g *Store) ReadNewest(ctx context.Context) (string, error) {
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
		rev, ok := strings.CutPrefix(line, SourceRevisionTrailer)
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

// Remote is the works repository, without credentials.
func (g *Store) Remote() string { return g.worksEP.Safe }

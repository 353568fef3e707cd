package gitstore

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitrepo"
)

// HeartbeatRef returns the ref whose tip says when cluster's applier last
// reported: one commit, with an empty tree and no parent, committed at the
// heartbeat and force-pushed over the previous one. A heartbeat costs a
// commit of a few hundred bytes and leaves no history, where a heartbeat
// in the status ref would add a copy of the whole status every time.
func HeartbeatRef(cluster string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/propagit/heartbeat/" + cluster)
}

// RecorderHeartbeatRef is the ref of the recording controller's heartbeat
// (works.RecorderHeartbeats), kept like a cluster's, in the status
// repository. It is outside refs/propagit/heartbeat/, so no cluster name
// can collide with it.
const RecorderHeartbeatRef = plumbing.ReferenceName("refs/propagit/recorder/heartbeat")

// PutRecorderHeartbeat implements works.RecorderHeartbeats.
func (g *Store) PutRecorderHeartbeat(ctx context.Context, at time.Time) error {
	return g.pushHeartbeat(ctx, RecorderHeartbeatRef, "propagit: recorder heartbeat\n", at)
}

// RecorderHeartbeat implements works.RecorderHeartbeats.
func (g *Store) RecorderHeartbeat(ctx context.Context) (time.Time, error) {
	return g.readHeartbeat(ctx, RecorderHeartbeatRef)
}

// putHeartbeat force-pushes a heartbeat commit of cluster made at at.
func (g *Store) putHeartbeat(ctx context.Context, cluster string, at time.Time) error {
	return g.pushHeartbeat(ctx, HeartbeatRef(cluster), "propagit: heartbeat "+cluster+"\n", at)
}

// pushHeartbeat force-pushes to ref a commit made at at, with an empty
// tree and no parent.
func (g *Store) pushHeartbeat(ctx context.Context, ref plumbing.ReferenceName, message string, at time.Time) error {
	s := memory.NewStorage()
	tree, err := gitrepo.WriteTree(s, nil)
	if err != nil {
		return err
	}
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: at}
	commit, err := g.writeSigned(s, &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree})
	if err != nil {
		return fmt.Errorf("failed to store the heartbeat: %w", err)
	}
	return g.pushRef(ctx, g.statusEP, s, ref, ref, commit, true)
}

// heartbeat returns cluster's last heartbeat from its heartbeat ref; zero
// when there is none.
func (g *Store) heartbeat(ctx context.Context, cluster string) (time.Time, error) {
	return g.readHeartbeat(ctx, HeartbeatRef(cluster))
}

// readHeartbeat returns the commit time at ref's tip; zero when there is
// no such ref.
func (g *Store) readHeartbeat(ctx context.Context, ref plumbing.ReferenceName) (time.Time, error) {
	s := memory.NewStorage()
	tip, err := g.fetch(ctx, g.statusEP, s, ref, ref, 1)
	if err != nil || tip.IsZero() {
		return time.Time{}, err
	}
	c, err := object.GetCommit(s, tip)
	if err != nil {
		return time.Time{}, fmt.Errorf("failed to read the heartbeat %s: %w", ref, err)
	}
	return c.Committer.When, nil
}

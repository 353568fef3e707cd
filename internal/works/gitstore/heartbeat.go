package gitstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
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

// The trailers of the recorder heartbeat's commit message that carry a
// refused source revision (works.RecorderState).
const (
	trailerRefusedRevision = "Refused-Revision: "
	trailerRefusedSince    = "Refused-Since: "
	trailerRefusedReason   = "Refused-Reason: "
)

// PutRecorderHeartbeat implements works.RecorderHeartbeats: the commit
// time is the heartbeat, and a refused revision goes in trailers of its
// message.
func (g *Store) PutRecorderHeartbeat(ctx context.Context, state works.RecorderState) error {
	state = state.Sanitized()
	message := "propagit: recorder heartbeat\n"
	if state.Refused() {
		message += "\n" + trailerRefusedRevision + state.RefusedRevision + "\n" +
			trailerRefusedSince + state.RefusedSince.Format(time.RFC3339) + "\n" +
			trailerRefusedReason + state.RefusedReason + "\n"
	}
	return g.pushHeartbeat(ctx, RecorderHeartbeatRef, message, state.At)
}

// RecorderHeartbeat implements works.RecorderHeartbeats.
func (g *Store) RecorderHeartbeat(ctx context.Context) (works.RecorderState, error) {
	c, err := g.heartbeatCommit(ctx, RecorderHeartbeatRef)
	if err != nil || c == nil {
		return works.RecorderState{}, err
	}
	return parseRecorderState(c.Committer.When, c.Message), nil
}

// parseRecorderState reads the state a heartbeat commit made at at with
// message carries, Sanitized: anyone who can push to the status
// repository can write it.
func parseRecorderState(at time.Time, message string) works.RecorderState {
	state := works.RecorderState{At: at}
	if len(message) > maxHeartbeatMessage {
		message = message[:maxHeartbeatMessage]
	}
	for line := range strings.SplitSeq(message, "\n") {
		switch {
		case strings.HasPrefix(line, trailerRefusedRevision):
			state.RefusedRevision = strings.TrimPrefix(line, trailerRefusedRevision)
		case strings.HasPrefix(line, trailerRefusedReason):
			state.RefusedReason = strings.TrimPrefix(line, trailerRefusedReason)
		case strings.HasPrefix(line, trailerRefusedSince):
			state.RefusedSince, _ = time.Parse(time.RFC3339, strings.TrimPrefix(line, trailerRefusedSince))
		}
	}
	return state.Sanitized()
}

// maxHeartbeatMessage bounds how much of a heartbeat commit's message is
// read: what the controller writes is far shorter.
const maxHeartbeatMessage = 4096

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
	c, err := g.heartbeatCommit(ctx, ref)
	if err != nil || c == nil {
		return time.Time{}, err
	}
	return c.Committer.When, nil
}

// heartbeatCommit returns the commit at ref's tip; nil when there is no
// such ref.
func (g *Store) heartbeatCommit(ctx context.Context, ref plumbing.ReferenceName) (*object.Commit, error) {
	s := memory.NewStorage()
	tip, err := g.fetch(ctx, g.statusEP, s, ref, ref, 1)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	c, err := object.GetCommit(s, tip)
	if err != nil {
		return nil, fmt.Errorf("failed to read the heartbeat %s: %w", ref, err)
	}
	return c, nil
}

package gitstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// StatusFile is the file of a status commit that holds the WorkStatus:
// JSON (which YAML readers read too), YAML in records written before.
const StatusFile = "status.yaml"

// StatusRef returns the ref holding cluster's status history: each commit's
// parent is the previous status, the first has none.
func StatusRef(cluster string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/propagit/status/" + cluster)
}

// statusRepo is what a Store knows of one cluster's status ref. Its
// storage holds only the tip commit (marked shallow), so memory stays
// bounded however many statuses are written.
type statusRepo struct {
	mu sync.Mutex
	s  storage.Storer
	// tip is the commit the remote ref was last seen at (zero: absent).
	tip plumbing.Hash
	// last is the normalized status at tip; nil until fetched, and after a
	// failed push.
	last *workv1alpha1.WorkStatus
	// beat is the newest heartbeat written or read (status or heartbeat
	// ref).
	beat time.Time
	// enc keeps the encoding of the entries of the last record encoded.
	enc statusEncoder
}

func (g *Store) statusRepo(cluster string) (*statusRepo, error) {
	if err := works.ValidateCluster(cluster); err != nil {
		return nil, err
	}
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	r := g.status[cluster]
	if r == nil {
		r = &statusRepo{s: memory.NewStorage()}
		g.status[cluster] = r
	}
	return r, nil
}

// GetStatus fetches cluster's status ref (that ref only, shallow when the
// server allows) and returns the status it holds: the zero status when the
// ref does not exist.
func (g *Store) GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	r, err := g.statusRepo(cluster)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := g.refreshStatus(ctx, cluster, r); err != nil {
		return nil, err
	}
	st := r.last.DeepCopy()
	if st.Cluster == nil {
		return st, nil // not written by a pull agent: no heartbeat ref to read
	}
	beat, err := g.heartbeat(ctx, cluster)
	if err != nil {
		return nil, err
	}
	if !beat.IsZero() && (st.Heartbeat == nil || beat.After(st.Heartbeat.Time)) {
		t := metav1.NewTime(beat)
		st.Heartbeat = &t
	}
	if st.Heartbeat != nil && st.Heartbeat.After(r.beat) {
		r.beat = st.Heartbeat.Time
	}
	return st, nil
}

// PutStatus writes status as a new commit on cluster's status ref when it is
// a transition from the stored one (see StatusChanged), and pushes that ref
// only. The store remembers what it last wrote or read, so a status that is
// not a transition costs no network call at all; this assumes one writer
// per cluster, as the design intends. A push rejected because the ref moved
// is refetched, re-compared and retried, up to PushAttempts times.
func (g *Store) PutStatus(ctx context.Context, cluster string, status *workv1alpha1.WorkStatus) error {
	r, err := g.statusRepo(cluster)
	if err != nil {
		return err
	}
	next := works.Normalize(status)
	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 1; ; attempt++ {
		err := g.putStatusOnce(ctx, cluster, r, next)
		if err == nil {
			return nil
		}
		r.last = nil
		if !gitrepo.IsRejected(err) || attempt >= g.opts.PushAttempts || ctx.Err() != nil {
			return fmt.Errorf("failed to write the status of %s%s: %w", cluster, attempts(attempt), err)
		}
	}
}

func (g *Store) putStatusOnce(ctx context.Context, cluster string, r *statusRepo, next *workv1alpha1.WorkStatus) error {
	if r.last == nil {
		if err := g.refreshStatus(ctx, cluster, r); err != nil {
			return err
		}
	}
	if !works.NormalizedChanged(r.last, next, 0) {
		return g.keepAlive(ctx, cluster, r, next)
	}
	next = works.Settle(r.last, next, g.now())
	data, entries, err := r.enc.encode(next)
	if err != nil {
		return err
	}
	g.written.statusEntries.Add(int64(entries))
	tree, err := gitrepo.WriteFiles(r.s, map[string][]byte{StatusFile: data})
	if err != nil {
		return err
	}
	commit, err := g.writeCommit(r.s, tree, r.tip, statusMessage(cluster, next))
	if err != nil {
		return err
	}
	ref := StatusRef(cluster)
	if err := g.push(ctx, g.statusEP, r.s, ref, ref, commit); err != nil {
		return err
	}
	g.written.statusWrites.Add(1)
	r.tip, r.last = commit, next
	if next.Heartbeat != nil {
		r.beat = next.Heartbeat.Time
	}
	return r.trim(ref)
}

// keepAlive writes next's heartbeat to the heartbeat ref when the last one
// written is HeartbeatInterval old: a live applier with nothing new to say
// still shows it is alive, at the cost of one small commit.
func (g *Store) keepAlive(ctx context.Context, cluster string, r *statusRepo, next *workv1alpha1.WorkStatus) error {
	interval := g.opts.HeartbeatInterval
	if interval <= 0 || next.Heartbeat == nil || (!r.beat.IsZero() && next.Heartbeat.Sub(r.beat) < interval) {
		return nil
	}
	if err := g.putHeartbeat(ctx, cluster, next.Heartbeat.Time); err != nil {
		return err
	}
	r.beat = next.Heartbeat.Time
	return nil
}

// refreshStatus fetches the status ref and reads the status at its tip.
func (g *Store) refreshStatus(ctx context.Context, cluster string, r *statusRepo) error {
	ref := StatusRef(cluster)
	tip, err := g.fetch(ctx, g.statusEP, r.s, ref, ref, 1)
	if err != nil {
		return err
	}
	st := &workv1alpha1.WorkStatus{}
	if !tip.IsZero() {
		if st, err = readStatus(r.s, tip); err != nil {
			return fmt.Errorf("failed to read the status of %s: %w", cluster, err)
		}
	}
	r.tip, r.last = tip, works.Normalize(st)
	return r.trim(ref)
}

// readStatus decodes StatusFile of commit h.
func readStatus(s storer.EncodedObjectStorer, h plumbing.Hash) (*workv1alpha1.WorkStatus, error) {
	t, err := gitrepo.CommitTree(s, h)
	if err != nil {
		return nil, err
	}
	f, err := t.File(StatusFile)
	if err != nil {
		return nil, err
	}
	content, err := f.Contents()
	if err != nil {
		return nil, err
	}
	return decodeStatus([]byte(content))
}

// trim drops every object but the tip's from the storage (see compact).
func (r *statusRepo) trim(ref plumbing.ReferenceName) error {
	s, err := gitrepo.Compact(r.s, ref, r.tip)
	if err != nil {
		return err
	}
	r.s = s
	return nil
}

// statusMessage is the commit message of a status: the cluster, the applied
// revision and the Ready condition.
func statusMessage(cluster string, st *workv1alpha1.WorkStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "propagit: status %s\n\n", cluster)
	if st.AppliedRevision != "" {
		fmt.Fprintf(&b, "Applied-Revision: %s\n", st.AppliedRevision)
	}
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady); c != nil {
		fmt.Fprintf(&b, "Ready: %s%s\n", c.Status, readyReason(*c))
	}
	return b.String()
}

func readyReason(c metav1.Condition) string {
	if c.Reason == "" {
		return ""
	}
	return " (" + c.Reason + ")"
}

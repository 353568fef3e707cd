package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/works"
)

// Snapshot is the records as read at one time, and what the pages derive
// from them.
type Snapshot struct {
	// Taken is when the records were read.
	Taken time.Time
	// Version changes whenever anything a page shows changes: it is the
	// hash of the records read and of the banners on the recorder.
	Version string
	Newest  string
	Inputs  []status.Input
	Report  *status.Report
	// Commits are the newest commits of the source, newest first; nil
	// without a source.
	Commits []source.Commit
	// Members are the Cluster objects of the newest revision, by name (their
	// labels and region); nil without a source.
	Members map[string]MemberMeta
	// Error is the last failure to read the records or the source ("" when
	// the last refresh was clean).
	Error string
	// Recorder is what the recording controller keeps with its heartbeat,
	// as judged at Taken: the banners on every page.
	Recorder Recorder
	// records is the hash of the records alone: while it does not change,
	// the last report and indexes are reused, however often the
	// controller's heartbeat moves.
	records string
	// beat is the recorder state as the store keeps it (zero when it keeps
	// none).
	beat works.RecorderState
	// rollouts is the rollouts' record, as the store keeps it (nil when
	// it keeps none).
	rollouts []byte

	index *lazyIndex
	// objects are the decoded manifests by cluster, for the index.
	objects map[string][]*unstructured.Unstructured
}

// Recorder is what the pages say of the recording controller: the source
// revision it refused, and whether its heartbeat says it stopped, judged
// as `propagit status --exit-code` judges it.
type Recorder struct {
	// Heartbeat is its last heartbeat, UTC; zero when the store keeps none.
	Heartbeat time.Time
	// Verdict is what Heartbeat says at the snapshot's time, with
	// status.DefaultStaleAfter.
	Verdict status.RecorderVerdict
	// Refused is the newest source revision when the controller refused
	// it; nil when it did not.
	Refused *status.SourceRefusal
	// ReadError says why the heartbeat could not be read; "" when it was.
	ReadError string
}

// recorderOf judges state at now.
func recorderOf(state works.RecorderState, now time.Time) Recorder {
	var rep status.Report
	rep.SetRecorder(state)
	r := Recorder{Verdict: status.JudgeRecorder(rep.RecorderHeartbeat, now, status.DefaultStaleAfter), Refused: rep.SourceRefused}
	if rep.RecorderHeartbeat != nil {
		r.Heartbeat = *rep.RecorderHeartbeat
	}
	return r
}

// Stale reports whether the heartbeat is older than
// status.DefaultStaleAfter.
func (r Recorder) Stale() bool { return r.Verdict == status.RecorderStale }

// Ahead reports whether the heartbeat is too far in the future to count.
func (r Recorder) Ahead() bool { return r.Verdict == status.RecorderAhead }

// key is what the banners show, for Version: the heartbeat only when a
// banner shows it, so a controller that beats does not change the pages.
func (r Recorder) key() string {
	var hb string
	if r.Verdict != status.RecorderLive {
		hb = r.Heartbeat.Format(time.RFC3339)
	}
	parts := []string{strconv.Itoa(int(r.Verdict)), hb, r.ReadError}
	if f := r.Refused; f != nil {
		parts = append(parts, f.Revision, f.Reason)
		if f.Since != nil {
			parts = append(parts, f.Since.Format(time.RFC3339))
		}
	}
	return hashOf(parts...)
}

// MemberMeta is what Git says about a member.
type MemberMeta struct {
	Labels map[string]string `json:"labels,omitempty"`
	Region string            `json:"region,omitempty"`
	Zone   string            `json:"zone,omitempty"`
}

// Refresh reads the records once and makes them the snapshot the pages
// show. On error the last snapshot stays, with the error.
func (s *Server) Refresh(ctx context.Context) error {
	snap, err := s.read(ctx)
	if err != nil {
		s.mu.Lock()
		cp := *s.snap
		cp.Error = err.Error()
		cp.Version = hashOf(cp.Version, cp.Error)
		s.snap = &cp
		s.mu.Unlock()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe(snap)
	if old := s.snap; old.Version != snap.Version {
		var moved []Event
		if !old.Taken.IsZero() && old.Report != nil {
			moved = moves(old.templates(), snap.templates(), snap.Taken)
		}
		s.record(snap, moved)
	}
	s.snap = snap
	return nil
}

// Current returns the snapshot the pages show.
func (s *Server) Current() *Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap
}

// read gathers the Works, each cluster's status and, with a source, the
// commits. When none of it changed since the last snapshot, that one's
// report and indexes are reused: folding a large fleet costs seconds.
func (s *Server) read(ctx context.Context) (*Snapshot, error) {
	snap, err := s.gather(ctx)
	if err != nil {
		return nil, err
	}
	if snap.records, err = version(snap); err != nil {
		return nil, err
	}
	snap.Version = hashOf(snap.records, snap.Recorder.key())
	if cur := s.Current(); cur.records == snap.records && !cur.Taken.IsZero() {
		same := *cur
		same.Taken, same.Version, same.Recorder, same.beat = snap.Taken, snap.Version, snap.Recorder, snap.beat
		rep := *cur.Report // shared with the pages being served: copied, not changed
		rep.SetRecorder(snap.beat)
		same.Report = &rep
		return &same, nil
	}
	if snap.Report, err = status.Build(snap.Inputs, snap.Newest); err != nil {
		return nil, fmt.Errorf("failed to fold the status: %w", err)
	}
	snap.Report.SetRecorder(snap.beat)
	if snap.Report.Rollouts, err = status.RolloutRows(snap.rollouts); err != nil {
		snap.Error = err.Error() // the records still show
	}
	if s.opts.Source != nil && snap.Newest != "" && snap.Error == "" {
		res, err := s.renderAt(ctx, snap.Newest, snap.Inputs)
		if err != nil {
			snap.Error = err.Error() // the records still show
		} else {
			snap.Members = res.members
		}
	}
	snap.objects = s.decoded.objects(snap.Inputs)
	snap.templates() // built here, off the request path
	return snap, nil
}

// gather reads the records and the source's commits.
func (s *Server) gather(ctx context.Context) (*Snapshot, error) {
	ws, err := s.opts.Works.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to list the Works: %w", err)
	}
	snap := &Snapshot{Taken: s.opts.Now(), index: &lazyIndex{}}
	for _, wk := range ws {
		st, err := s.opts.Status.GetStatus(ctx, wk.Spec.Cluster)
		if err != nil {
			return nil, fmt.Errorf("failed to read the status of cluster %s: %w", wk.Spec.Cluster, err)
		}
		mode := wk.Spec.SyncMode
		if mode == "" {
			mode = "Push"
		}
		snap.Inputs = append(snap.Inputs, status.Input{Work: wk, Status: st, Mode: mode})
	}
	if snap.Newest, err = s.opts.Works.NewestRevision(ctx); err != nil {
		return nil, fmt.Errorf("failed to read the newest recorded revision: %w", err)
	}
	if rs, ok := s.opts.Works.(works.RolloutStates); ok {
		if snap.rollouts, err = rs.Rollouts(ctx); err != nil {
			return nil, fmt.Errorf("failed to read the rollouts: %w", err)
		}
	}
	var beatErr string
	if hb, ok := s.opts.Works.(works.RecorderHeartbeats); ok {
		// The controller's verdict on its source and its heartbeat, as
		// `propagit status` reads them.
		// A heartbeat that cannot be read (a Role without the Lease rule)
		// is said on every page, and the records still show.
		if snap.beat, err = hb.RecorderHeartbeat(ctx); err != nil {
			snap.beat, beatErr = works.RecorderState{}, fmt.Sprintf("failed to read the controller's heartbeat: %v", err)
		}
	}
	snap.Recorder = recorderOf(snap.beat, snap.Taken)
	snap.Recorder.ReadError = beatErr
	if s.opts.Source != nil {
		if snap.Commits, err = s.opts.Source.Commits(ctx, s.opts.Commits); err != nil {
			snap.Error = fmt.Sprintf("failed to read the source history: %v", err) // the records still show
		}
	}
	return snap, nil
}

// version hashes what the pages show — each Work's identity, annotations
// and manifest bytes, each status, the commits — without decoding a
// manifest. Taken is left out so an unchanged fleet keeps its ETags.
func version(snap *Snapshot) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode([]any{snap.Newest, snap.Commits, snap.Error, snap.rollouts}); err != nil {
		return "", err
	}
	for _, in := range snap.Inputs {
		w := in.Work
		if err := enc.Encode([]any{w.Spec.Cluster, w.Spec.SourceRevision, w.Spec.SyncMode, w.Spec.Suspended, w.Annotations, in.Status}); err != nil {
			return "", err
		}
		for _, m := range w.Spec.Manifests {
			h.Write(m.Raw)
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// observe notes when each application and each event without a time of
// its own was first seen, and forgets those no longer recorded. Called
// with s.mu held.
func (s *Server) observe(snap *Snapshot) {
	now := snap.Taken
	keep := map[string]bool{}
	note := func(key string) {
		keep[key] = true
		if _, ok := s.seen[key]; !ok {
			s.seen[key] = now
		}
	}
	// What the first read finds applied was applied at an unknown time
	// before it: its time stays zero (unknown), not the dashboard's start.
	first := s.snap.Taken.IsZero()
	for _, in := range snap.Inputs {
		if in.Status != nil && in.Status.AppliedRevision != "" {
			key := appliedKey(in.Status.AppliedRevision, in.Work.Spec.Cluster)
			if _, ok := s.seen[key]; !ok && first {
				s.seen[key] = time.Time{}
			}
			note(key)
		}
		for _, e := range untimedEvents(in) {
			note(e.key)
		}
	}
	for _, line := range snap.Report.ScheduleErrors {
		note("schedule\x00" + line)
	}
	listed := map[string]bool{}
	for _, c := range snap.Commits {
		listed[c.Hash] = true
	}
	for _, k := range slices.Collect(maps.Keys(s.seen)) {
		// Applications of the commits listed stay: the revisions page
		// shows how long each took.
		if rev, _, ok := strings.Cut(strings.TrimPrefix(k, "applied\x00"), "\x00"); ok && strings.HasPrefix(k, "applied\x00") && listed[rev] {
			continue
		}
		if !keep[k] {
			delete(s.seen, k)
		}
	}
}

func appliedKey(rev, cluster string) string { return "applied\x00" + rev + "\x00" + cluster }

// firstSeen returns when key was first observed (zero when never).
func (s *Server) firstSeen(key string) time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.seen[key]
}

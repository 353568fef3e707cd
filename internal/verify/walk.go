package verify

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Mode says which commits must be signed.
type Mode string

// Modes.
const (
	// ModeOff verifies nothing.
	ModeOff Mode = ""
	// ModeTip: the commit to be applied must be signed by a trusted key
	// (what Flux verifies).
	ModeTip Mode = "tip"
	// ModeAll: every commit since the last verified revision must be,
	// both sides of every merge included, so a signed merge cannot bring
	// in an unsigned commit.
	ModeAll Mode = "all"
)

// ParseMode parses a --verify-commits value ("" and "off" are ModeOff).
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "off", "none":
		return ModeOff, nil
	case string(ModeTip), string(ModeAll):
		return Mode(s), nil
	}
	return ModeOff, fmt.Errorf("%q: want tip, all or off", s)
}

// Objects is where commits are read from: a repository's Storer.
type Objects = storer.EncodedObjectStorer

// ReadCommit reads commit h, refusing one larger than max bytes (0: no
// bound) before decoding it: go-git decodes a long header in time
// quadratic in its length (a 1 MB signature takes seconds).
func ReadCommit(s Objects, h plumbing.Hash, max int64) (*object.Commit, error) {
	o, err := s.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("commit %s is not in the repository (a shallow clone?): %w", shortHash(h.String()), err)
		}
		return nil, fmt.Errorf("failed to read commit %s: %w", shortHash(h.String()), err)
	}
	if max > 0 && o.Size() > max {
		return nil, fail(ErrTooLarge, "commit %s: %d bytes, more than %d", shortHash(h.String()), o.Size(), max)
	}
	return object.DecodeCommit(s, o)
}

// Report is the verdict on a revision: one Result per commit verified,
// newest first.
type Report struct {
	// Tip is the revision verified; Base the revision it was verified
	// from ("" for the whole history, or the tip alone).
	Tip     string   `json:"tip"`
	Base    string   `json:"base,omitempty"`
	Mode    Mode     `json:"mode"`
	Results []Result `json:"commits"`
	// Err is set when the commits could not be read at all (too many, a
	// missing object); Results is then incomplete.
	Err error `json:"-"`
}

// Failed returns the first commit that does not verify, or nil.
func (r *Report) Failed() *Result {
	for i := range r.Results {
		if !r.Results[i].OK() {
			return &r.Results[i]
		}
	}
	return nil
}

// Error returns why the revision does not verify: the first failing
// commit, named; nil when every commit verifies.
func (r *Report) Error() error {
	if r.Err != nil {
		return r.Err
	}
	if f := r.Failed(); f != nil {
		return &Error{Result: *f}
	}
	return nil
}

// Error is a revision refused because of one commit.
type Error struct {
	Result Result
}

func (e *Error) Error() string { return e.Result.String() }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Result.Err }

// Revision verifies tip in mode: in ModeTip the tip commit alone; in
// ModeAll every commit reachable from tip and not from base (base ""
// verifies the whole history, up to Limits.MaxCommits commits).
func (v *Verifier) Revision(repo Objects, tip, base string, mode Mode) *Report {
	rep := &Report{Tip: tip, Mode: mode}
	if mode != ModeAll {
		c, err := ReadCommit(repo, plumbing.NewHash(tip), v.limits.MaxCommitBytes)
		if err != nil {
			rep.Err = err
			if errors.Is(err, ErrTooLarge) {
				msg := strings.TrimPrefix(err.Error(), "commit "+shortHash(tip)+": ")
				rep.Err, rep.Results = nil, []Result{{Commit: tip, Reason: ReasonTooLarge, Message: msg, Err: fail(ErrTooLarge, "%s", msg)}}
			}
			return rep
		}
		rep.Results = []Result{v.Commit(c)}
		return rep
	}
	rep.Base = base
	var bases []plumbing.Hash
	if base != "" {
		bases = []plumbing.Hash{plumbing.NewHash(base)}
	}
	commits, err := v.between(repo, plumbing.NewHash(tip), bases)
	if err != nil {
		rep.Err = err
		return rep
	}
	for _, c := range commits {
		rep.Results = append(rep.Results, v.Commit(c))
	}
	return rep
}

// between returns the commits reachable from tip and from none of bases,
// newest first (by committer time), at most Limits.MaxCommits of them
// (more is an error wrapping ErrTooMany). It walks the two sides together, newest
// first, as git rev-list does, so it reads only the commits it returns and
// those where the sides meet. Clock skew between commits can only make it
// return a commit more, never one less.
func (v *Verifier) between(repo Objects, tip plumbing.Hash, bases []plumbing.Hash) ([]*object.Commit, error) {
	max := v.limits.MaxCommits
	w := &walk{repo: repo, maxBytes: v.limits.MaxCommitBytes, state: map[plumbing.Hash]bool{}, popped: map[plumbing.Hash]*object.Commit{}}
	for _, b := range bases {
		if err := w.push(b, true); err != nil {
			return nil, err
		}
	}
	if err := w.push(tip, false); err != nil {
		return nil, err
	}
	var out []*object.Commit
	for w.queue.Len() > 0 && !w.onlyUninteresting() {
		e := heap.Pop(&w.queue).(walkEntry)
		uninteresting := w.state[e.c.Hash]
		if _, again := w.popped[e.c.Hash]; again && !uninteresting {
			continue
		}
		w.popped[e.c.Hash] = e.c
		if !uninteresting {
			if max > 0 && len(out) >= max {
				return nil, fail(ErrTooMany, "more than %d commits to verify from %s; set a base revision nearer the tip", max, shortHash(tip.String()))
			}
			out = append(out, e.c)
		}
		for _, p := range e.c.ParentHashes {
			if err := w.push(p, uninteresting); err != nil {
				return nil, err
			}
		}
	}
	// A commit taken before the base side reached it (skew) is dropped.
	kept := out[:0]
	for _, c := range out {
		if !w.state[c.Hash] {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// walk is the state of Between: each commit seen and whether it is
// reachable from a base (uninteresting).
type walk struct {
	repo     Objects
	maxBytes int64
	state    map[plumbing.Hash]bool
	popped   map[plumbing.Hash]*object.Commit
	queue    walkQueue
}

// push queues h, or marks it uninteresting when it was seen already: a
// commit taken as interesting before the base side reached it (skew) is
// queued again, so that its parents are marked too.
func (w *walk) push(h plumbing.Hash, uninteresting bool) error {
	was, seen := w.state[h]
	if seen {
		if uninteresting && !was {
			w.state[h] = true
			if c := w.popped[h]; c != nil {
				heap.Push(&w.queue, walkEntry{c: c})
			}
		}
		return nil
	}
	c, err := ReadCommit(w.repo, h, w.maxBytes)
	if err != nil {
		return err
	}
	w.state[h] = uninteresting
	heap.Push(&w.queue, walkEntry{c: c})
	return nil
}

// onlyUninteresting reports whether nothing interesting is left queued.
func (w *walk) onlyUninteresting() bool {
	for _, e := range w.queue {
		if !w.state[e.c.Hash] {
			return false
		}
	}
	return true
}

type walkEntry struct{ c *object.Commit }

// walkQueue is a max-heap by committer time.
type walkQueue []walkEntry

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	return q[i].c.Committer.When.After(q[j].c.Committer.When)
}
func (q walkQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *walkQueue) Push(x any)   { *q = append(*q, x.(walkEntry)) }
func (q *walkQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

package guard

import (
	"crypto/sha256"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Window is what a member has lost since its baseline: the objects it ran
// when the window opened. Deletions add up inside a window, so a deletion
// split across commits (pad the member with cheap objects, then delete the
// real ones) is measured against the objects the member ran before the
// padding. Objects added inside the window and deleted again cost nothing;
// an object deleted and added back is given back.
//
// A window stays open while the member's set of objects keeps changing: it
// reopens, with the member's objects as the new baseline, at the first
// revision that adds or removes objects after Options.Window without any
// such change, and at a commit that acknowledges a prune.
type Window struct {
	// Opened is when the baseline was taken; Changed when a revision last
	// added or removed objects.
	Opened, Changed time.Time
	// Baseline counts the objects the member ran at Opened.
	Baseline int
	// removed are baseline objects deleted since, added objects added
	// since; untracked counts baseline objects deleted past maxTracked
	// (never given back). An object added past maxTracked is not listed,
	// so deleting it again counts as a baseline one: the count errs
	// towards holding.
	removed, added digests
	untracked      int
}

// maxTracked bounds the objects a window lists as removed, and as added:
// 6 bytes each where the window is recorded, so at most 64 KiB each.
const maxTracked = 8192

// digest stands for an object key where a window lists it.
type digest [6]byte

type digests map[digest]struct{}

func digestOf(k workv1alpha1.ObjectKey) digest {
	sum := sha256.Sum256([]byte(k.Group + "\x00" + k.Kind + "\x00" + k.Namespace + "\x00" + k.Name))
	return digest(sum[:6])
}

// NewWindow opens a window on a member that runs keys.
func NewWindow(keys []workv1alpha1.ObjectKey, now time.Time) *Window {
	return &Window{Opened: now, Changed: now, Baseline: len(keys), removed: digests{}, added: digests{}}
}

// Lost counts the baseline objects deleted since the window opened.
func (w *Window) Lost() int { return len(w.removed) + w.untracked }

// advance returns the window after a revision that goes from before to
// after, and how many objects that revision deletes. w is not changed.
func (w *Window) advance(before, after []workv1alpha1.ObjectKey, now time.Time) (*Window, int) {
	next := &Window{Opened: w.Opened, Changed: w.Changed, Baseline: w.Baseline, untracked: w.untracked,
		removed: make(digests, len(w.removed)), added: make(digests, len(w.added))}
	for d := range w.removed {
		next.removed[d] = struct{}{}
	}
	for d := range w.added {
		next.added[d] = struct{}{}
	}
	in := func(keys []workv1alpha1.ObjectKey) map[workv1alpha1.ObjectKey]bool {
		m := make(map[workv1alpha1.ObjectKey]bool, len(keys))
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	was, is := in(before), in(after)
	deleted := 0
	for k := range was {
		if !is[k] {
			deleted++
			next.remove(digestOf(k))
		}
	}
	for k := range is {
		if !was[k] {
			next.add(digestOf(k))
		}
	}
	if deleted > 0 || len(is) != len(was)-deleted {
		next.Changed = now
	}
	return next, deleted
}

// remove records the deletion of the object of digest d.
func (w *Window) remove(d digest) {
	switch _, added := w.added[d]; {
	case added:
		delete(w.added, d)
	case len(w.removed) < maxTracked:
		w.removed[d] = struct{}{}
	default:
		w.untracked++
	}
}

// add records the addition of the object of digest d.
func (w *Window) add(d digest) {
	switch _, removed := w.removed[d]; {
	case removed:
		delete(w.removed, d)
	case len(w.added) < maxTracked:
		w.added[d] = struct{}{}
	}
}

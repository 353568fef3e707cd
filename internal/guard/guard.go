// Package guard holds back a revision that would delete more of a member
// than its author can have meant. Git is propagit's only control plane, so
// one careless commit (a selector typo, a root kustomization.yaml that
// lists some of the files) could otherwise empty production members. The
// rule is pure and shared: the controller holds such a revision for the
// member (it keeps running the previous one), and `propagit diff` warns in
// the pull request that the change would be held.
//
// Deletions add up (Window): a revision is held when it deletes more than
// the share by itself, or when it brings the deletions since the member's
// baseline past that share of the baseline. The baseline is what the
// member ran before its objects last started changing: objects added and
// removed keep the window open, and a day (--prune-window) without any
// such change closes it. So a deletion split across commits — pad the
// member with cheap objects, then delete the real ones — is held like the
// single commit it amounts to, unless the padding sat unchanged for the
// whole window. The controller records the window in the member's Work,
// so it outlives a restart; `diff` sees only the change in hand.
//
// The author acknowledges a large deletion through Git: a commit trailer
// "Propagit-Allow-Prune: true" on the commit being applied, in its trailer
// block (the message's last paragraph, as `git interpret-trailers` reads
// it); the same line quoted in a body does not count.
package guard

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// AllowTrailer is the commit trailer that acknowledges a large deletion.
const AllowTrailer = "Propagit-Allow-Prune"

// Options tune the guard.
type Options struct {
	// MaxPercent is the share of a member's propagit-managed objects one
	// revision may delete, and the share of its baseline (see Window) the
	// revisions of one window may delete together; more is held. A
	// revision that would delete all of them (at least one) is held too.
	// 100 turns the guard off.
	MaxPercent int
	// Window is how long a member's set of objects must stay the same
	// (nothing added or removed) before its deletions stop adding up and
	// its objects become the new baseline.
	Window time.Duration
}

// DefaultOptions holds a revision deleting more than half of a member, or
// bringing what a day's changes deleted past half of it.
func DefaultOptions() Options { return Options{MaxPercent: 50, Window: 24 * time.Hour} }

// BindFlags binds the guard's flags to fs with the current values as
// defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.MaxPercent, "max-prune-percent", o.MaxPercent, "hold a revision that would delete more than this share of a Ready member's objects (or all of them), "+
		"or bring the deletions since the member's baseline (see --prune-window) past this share of the baseline, "+
		"until a commit carries the trailer \""+AllowTrailer+": true\" (100 turns the guard off)")
	fs.DurationVar(&o.Window, "prune-window", o.Window, "deletions from a member add up until its set of objects has stayed the same this long "+
		"(or a commit acknowledges them); then its objects become the baseline the next deletions are measured against")
}

// Validate reports an out-of-range share.
func (o Options) Validate() error {
	if o.MaxPercent < 0 || o.MaxPercent > 100 {
		return fmt.Errorf("--max-prune-percent must be between 0 and 100, not %d", o.MaxPercent)
	}
	if o.Window < 0 {
		return fmt.Errorf("--prune-window must not be negative, not %s", o.Window)
	}
	return nil
}

// Hold says why a revision is held for one member.
type Hold struct {
	// Removed of Total objects would be deleted.
	Removed, Total int
	// Since, when set, is when the window opened: Removed of the Total
	// objects the member ran then would be deleted, counting the
	// revisions applied since.
	Since time.Time
}

// String is the reason people read in status and the log.
func (h Hold) String() string {
	what := fmt.Sprintf("would delete %d of %d objects propagit manages on this member", h.Removed, h.Total)
	if !h.Since.IsZero() {
		what = fmt.Sprintf("would bring the objects deleted from this member since %s to %d of the %d it ran then",
			h.Since.UTC().Format(time.RFC3339), h.Removed, h.Total)
	}
	return fmt.Sprintf("%s, more than the prune guard allows; "+
		"the member keeps the previous revision until a commit carries the trailer %q", what, AllowTrailer+": true")
}

// Judge returns a Hold when going from before to after deletes too much
// of a member, by itself (Check) or with the revisions applied since the
// window w opened, and the window to record if the revision goes ahead.
// A nil w, or one whose member has not added or removed objects for
// opts.Window, opens a new window on before. A revision that deletes
// nothing is never held. With the guard off both results are nil.
func Judge(before, after []workv1alpha1.ObjectKey, w *Window, now time.Time, opts Options) (*Hold, *Window) {
	if opts.MaxPercent >= 100 {
		return nil, nil
	}
	if w == nil || now.Sub(w.Changed) >= opts.Window {
		w = NewWindow(before, now)
	}
	next, deleted := w.advance(before, after, now)
	if h := Check(before, after, opts); h != nil || deleted == 0 {
		return h, next
	}
	if lost := next.Lost(); w.Baseline > 0 && lost*100 > opts.MaxPercent*w.Baseline {
		return &Hold{Removed: min(lost, w.Baseline), Total: w.Baseline, Since: w.Opened}, next
	}
	return nil, next
}

// Check returns a Hold when going from before to after deletes too much
// of a member, nil when it may go ahead.
func Check(before, after []workv1alpha1.ObjectKey, opts Options) *Hold {
	if opts.MaxPercent >= 100 || len(before) == 0 {
		return nil
	}
	kept := make(map[workv1alpha1.ObjectKey]bool, len(after))
	for _, k := range after {
		kept[k] = true
	}
	removed := 0
	for _, k := range before {
		if !kept[k] {
			removed++
		}
	}
	if removed == len(before) || removed*100 > opts.MaxPercent*len(before) {
		return &Hold{Removed: removed, Total: len(before)}
	}
	return nil
}

// Keys returns the keys of a Work's manifests; manifests that do not
// decode are left out.
func Keys(w *workv1alpha1.Work) []workv1alpha1.ObjectKey {
	if w == nil {
		return nil
	}
	out := make([]workv1alpha1.ObjectKey, 0, len(w.Spec.Manifests))
	for i := range w.Spec.Manifests {
		if obj, err := workv1alpha1.DecodeManifest(&w.Spec.Manifests[i]); err == nil {
			out = append(out, workv1alpha1.KeyOf(obj))
		}
	}
	return out
}

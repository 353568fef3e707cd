// Package guard holds back a revision that would delete more of a member
// than its author can have meant. Git is propagit's only control plane, so
// one careless commit (a selector typo, a root kustomization.yaml that
// lists some of the files) could otherwise empty production members. The
// rule is pure and shared: the controller holds such a revision for the
// member (it keeps running the previous one), and `propagit diff` warns in
// the pull request that the change would be held.
//
// The author acknowledges a large deletion through Git: a commit trailer
// "Propagit-Allow-Prune: true" on the commit being applied, in its trailer
// block (the message's last paragraph, as `git interpret-trailers` reads
// it); the same line quoted in a body does not count.
package guard

import (
	"fmt"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// AllowTrailer is the commit trailer that acknowledges a large deletion.
const AllowTrailer = "Propagit-Allow-Prune"

// Options tune the guard.
type Options struct {
	// MaxPercent is the share of a member's propagit-managed objects one
	// revision may delete; more is held. A revision that would delete all
	// of them (at least one) is held too. 100 turns the guard off.
	MaxPercent int
}

// DefaultOptions holds a revision deleting more than half of a member.
func DefaultOptions() Options { return Options{MaxPercent: 50} }

// Validate reports an out-of-range share.
func (o Options) Validate() error {
	if o.MaxPercent < 0 || o.MaxPercent > 100 {
		return fmt.Errorf("--max-prune-percent must be between 0 and 100, not %d", o.MaxPercent)
	}
	return nil
}

// Hold says why a revision is held for one member.
type Hold struct {
	// Removed of Total objects would be deleted.
	Removed, Total int
}

// String is the reason people read in status and the log.
func (h Hold) String() string {
	return fmt.Sprintf("would delete %d of %d objects propagit manages on this member, more than the prune guard allows; "+
		"the member keeps the previous revision until a commit carries the trailer %q", h.Removed, h.Total, AllowTrailer+": true")
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

package guard

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// WindowAnnotation records a member's Window on its Work, so a restarted
// controller measures against the same baseline: the works store is the
// controller's memory. Work annotations are propagit's own (a committer
// cannot write them); in a per-member works repository the member can, but
// a member that rewrites its own window only weakens the guard of itself.
const WindowAnnotation = workv1alpha1.AnnotationPrefix + "prune-window"

// maxRecord bounds a recorded window: two lists of maxTracked digests in
// base64, and a little more.
const maxRecord = 2*(maxTracked*len(digest{})*4/3+4) + 512

// windowRecord is a Window as recorded.
type windowRecord struct {
	Opened    time.Time `json:"opened"`
	Changed   time.Time `json:"changed"`
	Baseline  int       `json:"baseline"`
	Removed   string    `json:"removed,omitempty"`
	Added     string    `json:"added,omitempty"`
	Untracked int       `json:"untracked,omitempty"`
}

// Record returns w as WindowAnnotation holds it.
func (w *Window) Record() string {
	b, _ := json.Marshal(windowRecord{Opened: w.Opened.UTC(), Changed: w.Changed.UTC(), Baseline: w.Baseline,
		Removed: w.removed.record(), Added: w.added.record(), Untracked: w.untracked})
	return string(b)
}

// ParseWindow reads a window Record wrote; anything else is an error.
func ParseWindow(s string) (*Window, error) {
	if len(s) > maxRecord {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", WindowAnnotation, len(s), maxRecord)
	}
	var r windowRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("%s: %w", WindowAnnotation, err)
	}
	if r.Baseline < 0 || r.Untracked < 0 {
		return nil, fmt.Errorf("%s: negative count", WindowAnnotation)
	}
	w := &Window{Opened: r.Opened, Changed: r.Changed, Baseline: r.Baseline, untracked: r.Untracked}
	var err error
	if w.removed, err = parseDigests(r.Removed); err != nil {
		return nil, fmt.Errorf("%s: removed: %w", WindowAnnotation, err)
	}
	if w.added, err = parseDigests(r.Added); err != nil {
		return nil, fmt.Errorf("%s: added: %w", WindowAnnotation, err)
	}
	return w, nil
}

// record encodes the digests, in no particular order.
func (ds digests) record() string {
	b := make([]byte, 0, len(ds)*len(digest{}))
	for d := range ds {
		b = append(b, d[:]...)
	}
	return base64.RawStdEncoding.EncodeToString(b)
}

func parseDigests(s string) (digests, error) {
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	n := len(digest{})
	if len(b)%n != 0 || len(b)/n > maxTracked {
		return nil, fmt.Errorf("%d bytes: not a list of at most %d digests", len(b), maxTracked)
	}
	out := make(digests, len(b)/n)
	for i := 0; i < len(b); i += n {
		out[digest(b[i:i+n])] = struct{}{}
	}
	return out, nil
}

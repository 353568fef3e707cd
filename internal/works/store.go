// Package works records Work records — per cluster, the manifests rendered
// from one source revision — and their status, in one of two stores behind
// the same small interfaces: a Git work branch with per-cluster status refs
// (in one shared repository, or one repository per member:
// MemberGitStore), or Work custom resources on a hub, one namespace per
// member. Per member, each member's credentials reach its own records only,
// and its status is read from nowhere else.
//
// The package owns the per-cluster folder layout (layout.go, yaml.go): the
// path of each object's file, its bytes and the work.yaml head. The Git
// stores (works/gitstore, works/memberstore) encode and decode a cluster's
// folder on the work branch with it, and works/folder writes and reads the
// same files on disk for `propagit render --out`, so a render's output is
// the work branch by construction.
package works

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Store knows how to read and write the Works of every cluster.
type Store interface {
	// List returns the stored Works (spec only), sorted by cluster.
	List(ctx context.Context) ([]*workv1alpha1.Work, error)
	// Put records the Works rendered from one source revision. Works of
	// clusters absent from works are removed. A Work whose manifests did not
	// change is not rewritten. It returns the clusters whose Work changed.
	Put(ctx context.Context, revision string, works []*workv1alpha1.Work) ([]string, error)
	// NewestRevision returns the source revision of the newest Put that
	// changed any Work ("" when none): Works keep the revision that last
	// changed them, so they carry several.
	NewestRevision(ctx context.Context) (string, error)
}

// StatusStore knows how to read and write the status of one cluster's Work.
// Each cluster's status is its own record, so writers never contend.
type StatusStore interface {
	// GetStatus returns the last written status; a zero status when none.
	GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error)
	// PutStatus writes status when it differs from the stored one.
	PutStatus(ctx context.Context, cluster string, status *workv1alpha1.WorkStatus) error
}

// RecorderHeartbeats is a store that keeps the recording controller's
// heartbeat: the last time it read its source and found the Works recorded
// current, or found its newest revision refused. A record that is only as
// new as the last commit cannot tell a quiet repository from a stopped
// controller; this can, and `propagit status --exit-code` fails when it is
// old. With it the controller keeps its latest verdict on its source (a
// revision refused by --verify-commits), which status prints.
type RecorderHeartbeats interface {
	PutRecorderHeartbeat(ctx context.Context, state RecorderState) error
	// RecorderHeartbeat returns the last state written, Sanitized; zero
	// when there is none (no controller of this version ever recorded
	// here).
	RecorderHeartbeat(ctx context.Context) (RecorderState, error)
}

// RecorderState is what the recording controller writes after a pass: its
// heartbeat, and the newest source revision when the controller refused it.
type RecorderState struct {
	// At is the heartbeat.
	At time.Time `json:"at"`
	// RefusedRevision is the newest revision of the source, full hash, when
	// the controller refused it (its commits do not verify); "" when the
	// newest revision is not refused. Members keep what was recorded
	// before it.
	RefusedRevision string `json:"refusedRevision,omitempty"`
	// RefusedReason says why: "commit 9a70926: not signed".
	RefusedReason string `json:"refusedReason,omitempty"`
	// RefusedSince is when the controller first refused RefusedRevision.
	RefusedSince time.Time `json:"refusedSince,omitempty"`
}

// MaxRefusedReason bounds RecorderState.RefusedReason, in bytes.
const MaxRefusedReason = 512

// Refused reports whether the newest source revision is refused.
func (s RecorderState) Refused() bool { return s.RefusedRevision != "" }

// Sanitized returns s as it may be kept and printed, read back from a
// store that others (agents, members) may be able to write: a refused
// revision that is not a commit hash is dropped with its reason and time;
// the reason loses control characters (newlines included) and is cut to
// MaxRefusedReason bytes, on a rune boundary, ending in "…"; times are in
// UTC. Writers store it Sanitized too, so what is written reads back equal.
func (s RecorderState) Sanitized() RecorderState {
	s.At = s.At.UTC()
	if !isHash(s.RefusedRevision) {
		s.RefusedRevision, s.RefusedReason, s.RefusedSince = "", "", time.Time{}
		return s
	}
	s.RefusedRevision = strings.ToLower(s.RefusedRevision)
	s.RefusedSince = s.RefusedSince.UTC()
	s.RefusedReason = cleanReason(s.RefusedReason)
	if s.RefusedReason == "" {
		s.RefusedReason = "no reason given"
	}
	return s
}

// isHash reports whether s is a full SHA-1 or SHA-256 commit hash.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// cleanReason drops invalid UTF-8 and control and bidirectional
// characters (a newline or tab becomes a space), and cuts what is left.
func cleanReason(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= MaxRefusedReason {
		return s
	}
	const ellipsis = "…"
	cut := MaxRefusedReason - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// RolloutStates is a store that keeps the rollouts' state: one JSON
// document the recording controller writes after each pass that changed a
// rollout, so a restarted controller resumes every rollout at the wave it
// was in.
type RolloutStates interface {
	PutRollouts(ctx context.Context, data []byte) error
	// Rollouts returns the last document written; nil when none.
	Rollouts(ctx context.Context) ([]byte, error)
}

// MaxRolloutsSize bounds the rollouts' document, read back from a store
// others can write to.
const MaxRolloutsSize = 8 << 20

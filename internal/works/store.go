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
	"time"

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
// heartbeat: the last time it read its source without error and found the
// Works recorded current. A record that is only as new as the last commit
// cannot tell a quiet repository from a stopped controller; this can, and
// `propagit status --exit-code` fails when it is old.
type RecorderHeartbeats interface {
	PutRecorderHeartbeat(ctx context.Context, at time.Time) error
	// RecorderHeartbeat returns the last heartbeat; zero when there is
	// none (no controller of this version ever recorded here).
	RecorderHeartbeat(ctx context.Context) (time.Time, error)
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

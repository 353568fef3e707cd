package controller

import (
	"context"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/render"
)

// Snapshot is one revision of the source tree.
type Snapshot struct {
	Revision string
	// Message is the commit message; its trailers carry acknowledgements
	// (guard.AllowTrailer).
	Message string
	FS      filesys.FileSystem
	Root    string
}

// Fetcher knows how to bring the source to its latest revision.
type Fetcher interface {
	Fetch(ctx context.Context) (Snapshot, error)
}

// Options tune the controller.
type Options struct {
	// Interval is how often the source is polled (a webhook trigger fetches
	// at once).
	Interval time.Duration
	// ProbeTimeout bounds one member probe.
	ProbeTimeout time.Duration
	// ProbeInterval is how long a member's probe result is reused: a pass
	// started by a webhook soon after another does not probe again. 0
	// probes on every pass.
	ProbeInterval time.Duration
	// ClusterFailureThreshold and ClusterSuccessThreshold are how long a
	// new probe result must hold before a member's Ready condition flips
	// (Karmada's --cluster-failure-threshold / --cluster-success-threshold).
	ClusterFailureThreshold, ClusterSuccessThreshold time.Duration
	// PullHeartbeatTimeout marks a pull member not Ready when its agent's
	// heartbeat is older; 0 disables the check. Agents must report more
	// often (their heartbeat interval, in either store).
	PullHeartbeatTimeout time.Duration
	Render               render.Options
	Apply                apply.Options
	// Metrics records what the controller does; nil records nothing.
	Metrics *metrics.Recorder
	// Deliver tunes each member's syncer (health re-checks, retry backoff,
	// the version written into status).
	Deliver deliver.Options
	// Guard holds back a revision that would delete too much of a member.
	Guard guard.Options
}

// DefaultOptions returns the defaults of `propagit controller`.
func DefaultOptions() Options {
	return Options{
		Interval:                time.Minute,
		ProbeTimeout:            10 * time.Second,
		ProbeInterval:           10 * time.Second,
		ClusterFailureThreshold: 30 * time.Second,
		ClusterSuccessThreshold: 30 * time.Second,
		Render:                  render.DefaultOptions(),
		Apply:                   apply.DefaultOptions(),
		Deliver:                 deliver.DefaultOptions(),
		Guard:                   guard.DefaultOptions(),
	}
}

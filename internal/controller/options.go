package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/notify"
	"github.com/propagit/propagit/internal/promgate"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/secrets/keys"

	"github.com/propagit/propagit/internal/charts"
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

// Fetcher knows how to bring the source to its latest revision, and to
// read a past one it fetched (the last revision that completed its
// rollout, which clusters a rollout has not reached keep).
type Fetcher interface {
	Fetch(ctx context.Context) (Snapshot, error)
	ReadRevision(ctx context.Context, rev string) (Snapshot, error)
}

// EventRecorder knows how to record a Kubernetes Event on a cluster's Work.
type EventRecorder interface {
	Event(cluster, eventType, reason, message string)
}

// Options tune the controller.
type Options struct {
	// Interval is how often the source is polled (a webhook trigger fetches
	// at once).
	Interval time.Duration
	// Sharding, when set, splits the work with other replicas: this one
	// applies only to the members whose key it holds, and renders and
	// records the Works only while it holds shard.RecorderKey. nil does
	// everything.
	Sharding Sharding
	// ChartRemote fetches the remote charts HelmCharts name (repoURL);
	// nil fails them.
	ChartRemote charts.Remote
	// RolloutGate answers the Prometheus gates of RolloutPolicy waves; nil
	// when the controller was given no Prometheus (a gated wave's
	// clusters then never count as healthy, and the log says why).
	RolloutGate *promgate.Client
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
	// Keys finds each push member's age keys for SOPS-encrypted objects;
	// nil decrypts nothing (every encrypted object fails alone).
	Keys keys.Finder
	// Metrics records what the controller does; nil records nothing.
	Metrics *metrics.Recorder
	// Deliver tunes each member's syncer (health re-checks, retry backoff,
	// the version written into status).
	Deliver deliver.Options
	// Guard holds back a revision that would delete too much of a member.
	Guard guard.Options
	// Events records Kubernetes Events on the Works (the CR store's); nil
	// records none.
	Events EventRecorder
	// Notifier tells the Git host and chat how each revision rolls out;
	// nil tells no one.
	Notifier *notify.Notifier
}

// DefaultOptions returns the defaults of a Controller built in-process
// (tests, embedding). `propagit controller` starts from
// DefaultCommandOptions.
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

// DefaultCommandOptions returns the defaults of `propagit controller`:
// DefaultOptions plus what a deployed controller needs and an in-process
// one (whose pull agents may not report heartbeats) does not: a pull
// member whose agent is silent for a minute is not Ready, and member
// clients share the hub's bandwidth at 200 QPS each.
func DefaultCommandOptions() Options {
	o := DefaultOptions()
	o.PullHeartbeatTimeout = time.Minute
	o.Apply.QPS, o.Apply.Burst = 200, 400
	return o
}

// BindFlags binds the controller's flags, and those of the syncers and
// appliers it runs, to fs with the current values as defaults: call it on
// DefaultCommandOptions(). The render flags (render.Options) are bound by
// the CLI, which reads the restriction policy file they name.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "interval", o.Interval, "how often to poll the repository")
	fs.DurationVar(&o.ProbeInterval, "probe-interval", o.ProbeInterval, "how long a member probe (readiness, APIs, capacity) is reused; a webhook push soon after a pass does not probe again")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", o.ProbeTimeout, "how long one member probe may take")
	fs.DurationVar(&o.ClusterFailureThreshold, "cluster-failure-threshold", o.ClusterFailureThreshold, "how long a member must fail its probes before it is NotReady (and failover clocks start from its first failed probe)")
	fs.DurationVar(&o.ClusterSuccessThreshold, "cluster-success-threshold", o.ClusterSuccessThreshold, "how long a member must pass its probes before it is Ready again")
	fs.DurationVar(&o.PullHeartbeatTimeout, "pull-heartbeat-timeout", o.PullHeartbeatTimeout, "a pull member whose agent has not reported for this long is not Ready (0 disables); keep it above the agents' --heartbeat-interval")
	o.Guard.BindFlags(fs)
	o.Deliver.BindFlags(fs)
	o.Apply.BindFlags(fs)
}

// Validate reports the first option out of range, naming its flag.
func (o Options) Validate() error {
	for _, d := range []struct {
		flag     string
		v        time.Duration
		positive bool
	}{
		{"--interval", o.Interval, true},
		{"--probe-timeout", o.ProbeTimeout, true},
		{"--probe-interval", o.ProbeInterval, false},
		{"--cluster-failure-threshold", o.ClusterFailureThreshold, false},
		{"--cluster-success-threshold", o.ClusterSuccessThreshold, false},
		{"--pull-heartbeat-timeout", o.PullHeartbeatTimeout, false},
	} {
		if d.positive && d.v <= 0 {
			return fmt.Errorf("invalid %s %s: must be positive", d.flag, d.v)
		}
		if d.v < 0 {
			return fmt.Errorf("invalid %s %s: must not be negative", d.flag, d.v)
		}
	}
	if err := o.Deliver.Validate(); err != nil {
		return err
	}
	if err := o.Guard.Validate(); err != nil {
		return err
	}
	return o.Apply.Validate()
}

// Sharding is what the controller needs of internal/shard.
type Sharding interface {
	// Want names every key there is (the recorder and each push member).
	Want(keys []string)
	// Holds reports whether this replica holds key now.
	Holds(key string) bool
	// Changed signals when this replica gained or lost a key.
	Changed() <-chan struct{}
}

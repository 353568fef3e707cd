package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/secrets/keys"
)

// Options tune the agent.
type Options struct {
	Cluster string
	// Interval is how often the Work source is polled.
	Interval time.Duration
	// ProbeInterval is how often the agent measures its own cluster.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one measurement.
	ProbeTimeout time.Duration
	Deliver      deliver.Options
	Apply        apply.Options
	// Keys finds this member's age keys for SOPS-encrypted objects; nil
	// decrypts nothing (every encrypted object fails alone).
	Keys keys.Finder
}

// DefaultOptions returns the defaults of `propagit agent`.
func DefaultOptions() Options {
	return Options{Interval: 30 * time.Second, ProbeInterval: 30 * time.Second, ProbeTimeout: 10 * time.Second,
		Deliver: deliver.DefaultOptions(), Apply: apply.DefaultOptions()}
}

// BindFlags binds the agent's flags, and those of the syncer it runs, to
// fs with the current values as defaults: call it on DefaultOptions().
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Cluster, "cluster", o.Cluster, "the name of this member in the Cluster objects")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "how often to read the Work")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", o.ProbeTimeout, "how long one measurement of this member (readiness, APIs, capacity) may take")
	o.Deliver.BindFlags(fs)
}

// Validate reports the first option out of range, naming its flag.
func (o Options) Validate() error {
	switch {
	case o.Cluster == "":
		return errors.New("invalid --cluster: the name of this member is required")
	case o.Interval <= 0:
		return fmt.Errorf("invalid --interval %s: must be positive", o.Interval)
	case o.ProbeTimeout <= 0:
		return fmt.Errorf("invalid --probe-timeout %s: must be positive", o.ProbeTimeout)
	case o.ProbeInterval < 0:
		return fmt.Errorf("invalid probe interval %s: must not be negative", o.ProbeInterval)
	}
	if err := o.Deliver.Validate(); err != nil {
		return err
	}
	return o.Apply.Validate()
}

package deliver

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/metrics"
)

// Options tune a Syncer.
type Options struct {
	// HealthInterval is how often objects that are not healthy yet are
	// re-checked.
	HealthInterval time.Duration
	// RetryMin and RetryMax bound the backoff after a failed apply.
	RetryMin, RetryMax time.Duration
	// Version is written into the status as the applier's version.
	Version string
	// DriftInterval is how often an unchanged, healthy Work is compared
	// with the member as a whole and drift corrected (0: never). Between
	// these checks a watch on the applied objects reports changes at once.
	DriftInterval time.Duration
	// NoWatch turns the drift watch off: drift is then found by the
	// periodic check only.
	NoWatch bool
	// Metrics records apply results; nil records nothing.
	Metrics *metrics.Recorder
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{HealthInterval: 5 * time.Second, RetryMin: time.Second, RetryMax: 5 * time.Minute, Version: "dev",
		DriftInterval: 5 * time.Minute}
}

// BindFlags binds the flags of the options that have one to fs, with the
// current values as defaults: call it on DefaultOptions().
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.DriftInterval, "drift-interval", o.DriftInterval, "how often the whole member is compared with its Work and drift corrected (0 disables); between checks, a watch on the applied objects catches changes at once")
	fs.BoolVar(&o.NoWatch, "no-drift-watch", o.NoWatch, "do not watch applied objects; find drift with the periodic check only")
}

// Validate reports the first option out of range, naming its flag.
func (o Options) Validate() error {
	switch {
	case o.DriftInterval < 0:
		return fmt.Errorf("invalid --drift-interval %s: must be 0 (off) or positive", o.DriftInterval)
	case o.HealthInterval <= 0:
		return fmt.Errorf("invalid health interval %s: must be positive", o.HealthInterval)
	case o.RetryMin <= 0:
		return fmt.Errorf("invalid minimum retry delay %s: must be positive", o.RetryMin)
	case o.RetryMax < o.RetryMin:
		return fmt.Errorf("invalid maximum retry delay %s: must be at least the minimum, %s", o.RetryMax, o.RetryMin)
	}
	return nil
}

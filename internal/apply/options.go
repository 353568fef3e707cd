package apply

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultOwner is the installation name when none is given.
const DefaultOwner = "propagit"

// Options configures a Manager.
type Options struct {
	// FieldManager is the server-side apply field manager; propagit's
	// contract is "propagit".
	FieldManager string
	// Owner names this propagit installation; it labels every object
	// applied (workv1alpha1.LabelOwner), and objects labelled by another
	// installation are neither adopted nor pruned.
	Owner string
	// DecryptKinds are the kinds besides Secret that may be SOPS-encrypted
	// (--decrypt-kinds): no customization script ever reads them, and the
	// apiserver's messages about them are not kept (they may quote values).
	DecryptKinds []string
	// Concurrency is how many objects are read, applied or deleted at once.
	Concurrency int
	// WaitTimeout bounds the wait for applied CRDs (and other definitions)
	// to become ready before the objects that need them are applied.
	WaitTimeout time.Duration
	// WaitInterval is how often that readiness is polled.
	WaitInterval time.Duration
	// QPS and Burst are the client rate limits NewForConfig sets on the
	// rest.Config it is given. They dominate apply time at client-go's
	// defaults (5/10); New uses the client as it was built.
	QPS   float32
	Burst int
}

// DefaultOptions returns the options propagit runs with.
func DefaultOptions() Options {
	return Options{
		FieldManager: "propagit",
		Owner:        DefaultOwner,
		Concurrency:  32,
		WaitTimeout:  time.Minute,
		WaitInterval: 500 * time.Millisecond,
		QPS:          500,
		Burst:        1000,
	}
}

// BindFlags binds the member client's rate limits to fs as --member-qps
// and --member-burst, with the current values as defaults: call it on the
// caller's DefaultOptions().
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.Float32Var(&o.QPS, "member-qps", o.QPS, "client QPS per member (client-go's default of 5 throttles server-side apply)")
	fs.IntVar(&o.Burst, "member-burst", o.Burst, "client burst per member")
	fs.StringVar(&o.Owner, "owner", o.Owner, "name of this propagit installation, set as the propagit.io/owner label on everything it applies; "+
		"installations sharing a member need different names (and a pull agent the name of its controller), so none adopts or prunes another's objects")
}

// Validate reports the first option out of range, naming its flag. The
// rate limits must be positive; the other options may be zero (New fills
// them from DefaultOptions), never negative.
func (o Options) Validate() error {
	if errs := validation.IsValidLabelValue(o.Owner); o.Owner == "" || len(errs) > 0 {
		return fmt.Errorf("invalid --owner %q: must be a non-empty label value (%v)", o.Owner, errs)
	}
	switch {
	case o.QPS <= 0:
		return fmt.Errorf("invalid --member-qps %v: must be positive", o.QPS)
	case o.Burst <= 0:
		return fmt.Errorf("invalid --member-burst %d: must be positive", o.Burst)
	case o.Concurrency < 0:
		return fmt.Errorf("invalid apply concurrency %d: must not be negative", o.Concurrency)
	case o.WaitTimeout < 0:
		return fmt.Errorf("invalid apply wait timeout %s: must not be negative", o.WaitTimeout)
	case o.WaitInterval < 0:
		return fmt.Errorf("invalid apply wait interval %s: must not be negative", o.WaitInterval)
	}
	return nil
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.FieldManager == "" {
		o.FieldManager = d.FieldManager
	}
	if o.Owner == "" {
		o.Owner = d.Owner
	}
	if o.Concurrency <= 0 {
		o.Concurrency = d.Concurrency
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = d.WaitTimeout
	}
	if o.WaitInterval <= 0 {
		o.WaitInterval = d.WaitInterval
	}
	if o.QPS <= 0 {
		o.QPS = d.QPS
	}
	if o.Burst <= 0 {
		o.Burst = d.Burst
	}
	return o
}

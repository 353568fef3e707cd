package apply

import (
	"time"
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

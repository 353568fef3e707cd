package apply

import (
	"time"
)

// Keys propagit's renderer stamps on every object. They must match the
// constants in internal/render/stamp.go (LabelManaged, AnnotationConflict,
// AnnotationTemplate); apply may not import render, so they are declared
// again here.
const (
	// LabelManaged marks an object propagit created. Only objects that still
	// carry it are pruned, and an existing object without it is a conflict.
	LabelManaged = "propagit.io/managed"
	// AnnotationConflict is Karmada's conflict-resolution annotation:
	// "overwrite" takes over an object propagit did not create, anything
	// else (or none) refuses to.
	AnnotationConflict = "work.karmada.io/conflict-resolution"
	// AnnotationTemplate names the source template of an object.
	AnnotationTemplate = "propagit.io/template"
)

// conflictOverwrite is the AnnotationConflict value that allows a take-over.
const conflictOverwrite = "overwrite"

// Actions reported in workv1alpha1.ObjectResult.Action.
const (
	ActionCreated    = "Created"
	ActionConfigured = "Configured"
	ActionUnchanged  = "Unchanged"
	ActionPruned     = "Pruned"
	ActionFailed     = "Failed"
	ActionSkipped    = "Skipped"
	// ActionDrifted: the object differs on the member and its drift mode
	// (warn) says to report it only.
	ActionDrifted = "Drifted"
)

// Health values reported in workv1alpha1.ObjectResult.Health. The first four
// are kstatus statuses.
const (
	HealthCurrent    = "Current"
	HealthInProgress = "InProgress"
	HealthFailed     = "Failed"
	HealthNotFound   = "NotFound"
	HealthUnknown    = "Unknown"
)

// Options configures a Manager.
type Options struct {
	// FieldManager is the server-side apply field manager; propagit's
	// contract is "propagit".
	FieldManager string
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

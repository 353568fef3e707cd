package e2etest

import (
	"fmt"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/deliver"
)

// ControllerOptions are the controller's defaults with the waits shortened
// for tests; its syncers write version into status.
func ControllerOptions(version string) controller.Options {
	opts := controller.DefaultOptions()
	opts.Interval = time.Second
	opts.ProbeTimeout = 5 * time.Second
	opts.ProbeInterval = time.Second
	opts.Deliver = DeliverOptions(version)
	return opts
}

// DeliverOptions are the syncer's defaults with short retries; it writes
// version into status.
func DeliverOptions(version string) deliver.Options {
	opts := deliver.DefaultOptions()
	opts.RetryMin = 250 * time.Millisecond
	opts.RetryMax = 2 * time.Second
	opts.HealthInterval = time.Second
	opts.Version = version
	return opts
}

// WaitRevision waits until c has the revision rev in force, without a
// source error.
func WaitRevision(t testing.TB, c *controller.Controller, rev string) {
	t.Helper()
	Eventually(t, Converge, PollEvery, func() (bool, string) {
		st := c.State()
		return st.Revision == rev && st.SourceError == "", fmt.Sprintf("want revision %s, state %+v", rev, st)
	})
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaderOptions are the leader election flags: with two controller replicas
// one acts and the other takes over within the lease duration.
type leaderOptions struct {
	enabled bool
	lease   time.Duration
	renew   time.Duration
	retry   time.Duration
	name    string
}

func defaultLeaderOptions() leaderOptions {
	return leaderOptions{lease: 15 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second, name: "propagit-controller"}
}

// bindFlags binds the leader election flags with the current values as
// defaults: call it on defaultLeaderOptions().
func (l *leaderOptions) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&l.enabled, "leader-elect", l.enabled, "hold a Lease on the hub before acting, so several replicas can run (needs a hub)")
	fs.DurationVar(&l.lease, "leader-elect-lease-duration", l.lease, "lease duration")
	fs.DurationVar(&l.renew, "leader-elect-renew-deadline", l.renew, "renew deadline")
	fs.DurationVar(&l.retry, "leader-elect-retry-period", l.retry, "retry period")
	fs.StringVar(&l.name, "leader-elect-lease-name", l.name, "name of the Lease in --controller-namespace")
}

// validate checks what client-go's leader election would otherwise panic
// on, naming the flags.
func (l *leaderOptions) validate() error {
	switch {
	case l.retry <= 0:
		return fmt.Errorf("invalid --leader-elect-retry-period %s: must be positive", l.retry)
	case float64(l.renew) <= leaderelection.JitterFactor*float64(l.retry):
		return fmt.Errorf("invalid --leader-elect-renew-deadline %s: must be more than %.1f × --leader-elect-retry-period (%s)", l.renew, leaderelection.JitterFactor, l.retry)
	case l.lease <= l.renew:
		return fmt.Errorf("invalid --leader-elect-renew-deadline %s: must be less than --leader-elect-lease-duration (%s)", l.renew, l.lease)
	case l.name == "":
		return errors.New("invalid --leader-elect-lease-name: must not be empty")
	}
	return nil
}

// runAsLeader runs fn while this process holds the Lease and returns fn's
// error once fn has returned. It returns when ctx ends or the lease is
// lost (an error: the process should then exit so a restarted replica
// starts clean).
func (l *leaderOptions) runAsLeader(ctx context.Context, hub *rest.Config, namespace string, log logr.Logger, fn func(context.Context) error) error {
	id, lock, err := l.lock(hub, namespace)
	if err != nil {
		return err
	}
	// fn runs in a goroutine of the elector, which Run does not wait for:
	// it registers under mu, and once Run has returned it no longer starts.
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		over    bool
		leading bool
		fnErr   error
	)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: l.lease, RenewDeadline: l.renew, RetryPeriod: l.retry, ReleaseOnCancel: true,
		Name: l.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if over {
					mu.Unlock()
					return
				}
				leading = true
				wg.Add(1)
				mu.Unlock()
				defer wg.Done()
				log.Info("leading", "identity", id)
				fnErr = fn(ctx)
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("following", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("invalid leader election settings: %w", err)
	}
	le.Run(ctx) // cancels fn's context when it returns
	mu.Lock()
	over = true
	mu.Unlock()
	wg.Wait()
	switch {
	case fnErr != nil:
		return fnErr
	case leading && ctx.Err() == nil:
		return fmt.Errorf("lost the leader lease %s/%s", namespace, l.name)
	}
	return nil
}

// lock returns this process's identity and the Lease lock it competes for.
func (l *leaderOptions) lock(hub *rest.Config, namespace string) (string, resourcelock.Interface, error) {
	cs, err := kubernetes.NewForConfig(hub)
	if err != nil {
		return "", nil, fmt.Errorf("failed to create the leader election client: %w", err)
	}
	id, _ := os.Hostname()
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, l.name, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return "", nil, fmt.Errorf("failed to create the leader election lock: %w", err)
	}
	return id, lock, nil
}

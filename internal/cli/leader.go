package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
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

// runAsLeader runs fn while this process holds the Lease; it returns when
// ctx ends or the lease is lost (the process should then exit so a
// restarted replica starts clean).
func (l *leaderOptions) runAsLeader(ctx context.Context, hub *rest.Config, namespace string, log logr.Logger, fn func(context.Context)) error {
	cs, err := kubernetes.NewForConfig(hub)
	if err != nil {
		return err
	}
	id, _ := os.Hostname()
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, l.name, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	lost := make(chan struct{})
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: l.lease, RenewDeadline: l.renew, RetryPeriod: l.retry, ReleaseOnCancel: true,
		Name: l.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading", "identity", id)
				fn(ctx)
			},
			OnStoppedLeading: func() { close(lost) },
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("following", "leader", identity)
				}
			},
		},
	})
	select {
	case <-lost:
		if ctx.Err() == nil {
			return fmt.Errorf("lost the leader lease %s/%s", namespace, l.name)
		}
	default:
	}
	return nil
}

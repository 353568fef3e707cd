package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/shard"
)

// shardOptions are the flags of sharding: several replicas split the push
// members through Leases, with the leader election timings.
type shardOptions struct {
	enabled  bool
	identity string
}

func (s *shardOptions) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&s.enabled, "shard", false, "split the push members between all replicas through Leases on the hub (each member applied by one replica, "+
		"one replica renders and records); takes the --leader-elect-* timings and replaces --leader-elect")
	fs.StringVar(&s.identity, "shard-identity", "", "this replica's name among the shards, a DNS label (default: $POD_NAME, else the host name)")
}

// resolve returns the replica identity, checked.
func (s *shardOptions) resolve() (string, error) {
	id := s.identity
	if id == "" {
		id = os.Getenv("POD_NAME")
	}
	if id == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("--shard-identity is empty and the host name is unknown: %w", err)
		}
		id = strings.ToLower(h)
	}
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return "", fmt.Errorf("invalid --shard-identity %q: %s", id, errs[0])
	}
	return id, nil
}

// sharder builds the Sharder for c, which it tells to let go of a key
// before the Lease goes.
func (s *shardOptions) sharder(hub *rest.Config, namespace string, l leaderOptions, c func() *controller.Controller, log logr.Logger) (*shard.Sharder, error) {
	id, err := s.resolve()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(hub)
	if err != nil {
		return nil, fmt.Errorf("failed to create the shard client: %w", err)
	}
	return shard.New(cs, shard.Options{Namespace: namespace, Identity: id, LeaseDuration: l.lease, RenewDeadline: l.renew, RetryPeriod: l.retry},
		func(key string) { c().Release(key) }, log.WithName("shard")), nil
}

// runSharded runs the sharder and the controller together until ctx ends;
// the sharder gives its keys up (after the controller let go) on the way out.
func runSharded(ctx context.Context, sh *shard.Sharder, run func(context.Context) error) error {
	errs := make(chan error, 1)
	shardCtx, stop := context.WithCancel(context.Background())
	go func() { errs <- sh.Run(shardCtx) }()
	err := run(ctx)
	stop()
	if serr := <-errs; err == nil {
		err = serr
	}
	return err
}

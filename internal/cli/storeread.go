package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/works/memberstore"
)

// storeReadOptions are the flags of the commands that read the recorded
// Works and their status (status, wait): the store, the members to show
// and how often to read again.
type storeReadOptions struct {
	repo     gitOptions
	store    storeOptions
	clusters []string
	interval time.Duration
}

// bindFlags binds --repo, the store flags, --cluster and --interval, with
// the command's words for --cluster and its --interval default.
func (o *storeReadOptions) bindFlags(cmd *cobra.Command, clusterHelp string, interval time.Duration, intervalHelp string) {
	o.repo.bindFlags(cmd, "repo", "the repository holding the work branch (git store)")
	o.store.bindFlags(cmd)
	f := cmd.Flags()
	bindClusters(f, &o.clusters, clusterHelp)
	f.DurationVar(&o.interval, "interval", interval, intervalHelp)
}

// validate checks --interval (--cluster is checked when parsed).
func (o *storeReadOptions) validate() error {
	if o.interval < minWaitInterval {
		return fmt.Errorf("--interval %s: want at least %s", o.interval, minWaitInterval)
	}
	return nil
}

// openStores returns a context that ends on SIGINT or SIGTERM and the
// stores repo and so name, the git store cloning into a temporary folder;
// done stops the context and removes the folder.
func openStores(parent context.Context, repo gitOptions, so storeOptions, pattern string) (context.Context, *stores, func(), error) {
	ctx, stop := signal.NotifyContext(orBackground(parent), os.Interrupt, syscall.SIGTERM)
	auth, err := repo.auth()
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	cache, err := os.MkdirTemp("", pattern)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	done := func() {
		_ = os.RemoveAll(cache)
		stop()
	}
	st, err := so.build(repo, auth, filepath.Join(cache, "works"))
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return ctx, st, done, nil
}

// gather reads the Works (of clusters only, when any are named), their
// status and the store's newest revision.
func gather(ctx context.Context, st *stores, clusters []string) ([]status.Input, string, error) {
	if m, ok := st.works.(*memberstore.Store); ok {
		m.Track(clusters) // one repository per member: only the named ones are reached
	}
	ws, err := st.works.List(ctx)
	if err != nil {
		return nil, "", err
	}
	var inputs []status.Input
	for _, wk := range ws {
		if len(clusters) > 0 && !slices.Contains(clusters, wk.Spec.Cluster) {
			continue
		}
		s, err := st.status.GetStatus(ctx, wk.Spec.Cluster)
		if err != nil {
			return nil, "", err
		}
		mode := wk.Spec.SyncMode
		if mode == "" {
			mode = "Push"
		}
		inputs = append(inputs, status.Input{Work: wk, Status: s, Mode: mode})
	}
	newest, err := st.works.NewestRevision(ctx)
	if err != nil {
		return nil, "", err
	}
	return inputs, newest, nil
}

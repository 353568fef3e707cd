package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/works/memberstore"
)

type statusOptions struct {
	repo     gitOptions
	store    storeOptions
	output   string
	clusters []string
	exitCode bool
	watch    bool
	interval time.Duration
}

func newStatusCommand() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what each member runs: applied revision, health, drift",
		Long: `status reads the Work records and their per-cluster status from the
git store (the work branch and status refs of --repo) or the cr store (Work
custom resources on the hub) and prints the cluster table, the template table
and, for the newest revision, how many clusters run it applied and healthy.

--exit-code exits 1 unless every member (every --cluster) runs the newest
revision applied and healthy. --watch prints the report again each time it
changes, every --interval, until interrupted. -o wide adds the Kubernetes
version and allocatable CPU and memory that pull agents report, and the
whole message; -o name prints cluster/<name> per member.`,
		Example: `  propagit status --repo https://git.example.com/fleet.git
  propagit status --repo https://git.example.com/fleet.git --cluster prod-eu --exit-code
  propagit status --works-store cr --hub-kubeconfig hub.kubeconfig -o json
  propagit status --repo https://git.example.com/fleet.git --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	o.repo.bindFlags(cmd, "repo", "the repository holding the work branch (git store)")
	o.store.bindFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(status.Formats, ", "))
	f.StringArrayVar(&o.clusters, "cluster", nil, "show only this member (repeatable)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 unless every member shown runs the newest revision applied and healthy")
	f.BoolVarP(&o.watch, "watch", "w", false, "print the report again whenever it changes, until interrupted")
	f.DurationVar(&o.interval, "interval", 5*time.Second, "how often --watch reads the store (at least 100ms)")
	return cmd
}

func (o *statusOptions) validate() error {
	if !slices.Contains(status.Formats, o.output) {
		return fmt.Errorf("--output must be one of %s, not %q", strings.Join(status.Formats, ", "), o.output)
	}
	if o.interval < minWaitInterval {
		return fmt.Errorf("--interval %s: want at least %s", o.interval, minWaitInterval)
	}
	if o.watch && o.exitCode {
		return fmt.Errorf("--watch and --exit-code do not go together: --watch never ends on its own")
	}
	for _, c := range o.clusters {
		if c == "" {
			return fmt.Errorf("--cluster: empty name")
		}
	}
	return nil
}

func (o *statusOptions) run(parent context.Context, w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(orBackground(parent), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, cleanup, err := openStores(o.repo, o.store, "propagit-status-*")
	if err != nil {
		return err
	}
	defer cleanup()
	if !o.watch {
		rep, err := o.report(ctx, st)
		if err != nil {
			return err
		}
		if err := status.Write(w, rep, o.output, time.Now()); err != nil {
			return err
		}
		if o.exitCode && !rep.AllRunning() {
			return &ExitError{Code: 1}
		}
		return nil
	}
	return o.watchReports(ctx, st, w)
}

// watchReports prints the report whenever its data changes (not its
// "ago" columns), until ctx ends.
func (o *statusOptions) watchReports(ctx context.Context, st *stores, w io.Writer) error {
	var last []byte
	for {
		rep, err := o.report(ctx, st)
		switch {
		case ctx.Err() != nil:
			return nil // interrupted: the way a watch ends
		case err != nil:
			return err
		}
		data, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, last) {
			if last != nil && (o.output == "text" || o.output == "wide") {
				fmt.Fprintln(w)
			}
			if err := status.Write(w, rep, o.output, time.Now()); err != nil {
				return err
			}
			last = data
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}

// report reads the stores once and builds the report of the members shown.
func (o *statusOptions) report(ctx context.Context, st *stores) (*status.Report, error) {
	inputs, newest, err := gather(ctx, st, o.clusters)
	if err != nil {
		return nil, err
	}
	for _, c := range o.clusters {
		if !slices.ContainsFunc(inputs, func(in status.Input) bool { return in.Work.Spec.Cluster == c }) {
			return nil, fmt.Errorf("--cluster %s: no Work recorded for this cluster", c)
		}
	}
	return status.Build(inputs, newest)
}

// openStores builds the stores the flags name, the git store cloning into
// a temporary folder that cleanup removes.
func openStores(repo gitOptions, so storeOptions, pattern string) (*stores, func(), error) {
	auth, err := repo.auth()
	if err != nil {
		return nil, nil, err
	}
	cache, err := os.MkdirTemp("", pattern)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(cache) }
	st, err := so.build(repo, auth, filepath.Join(cache, "works"))
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return st, cleanup, nil
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

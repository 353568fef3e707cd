package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/status"
)

type statusOptions struct {
	storeReadOptions
	output   string
	exitCode bool
	watch    bool
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
	o.storeReadOptions.bindFlags(cmd, "show only this member", 5*time.Second, "how often --watch reads the store (at least 100ms)")
	f := cmd.Flags()
	bindFormat(cmd, &o.output, "text", status.Formats, "output format")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 unless every member shown runs the newest revision applied and healthy")
	f.BoolVarP(&o.watch, "watch", "w", false, "print the report again whenever it changes, until interrupted")
	return cmd
}

func (o *statusOptions) validate() error {
	if err := o.storeReadOptions.validate(); err != nil {
		return err
	}
	if o.watch && o.exitCode {
		return fmt.Errorf("--watch and --exit-code do not go together: --watch never ends on its own")
	}
	return nil
}

func (o *statusOptions) run(parent context.Context, w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, st, done, err := openStores(parent, o.repo, o.store, "propagit-status-*")
	if err != nil {
		return err
	}
	defer done()
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

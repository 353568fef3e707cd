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
	"github.com/propagit/propagit/internal/works"
)

type statusOptions struct {
	storeReadOptions
	output   string
	exitCode bool
	watch    bool
	// staleAfter is the age from which the recorder heartbeat says the
	// controller stopped recording.
	staleAfter time.Duration
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
revision applied and healthy, when nothing is recorded at all, and when the
controller stopped recording: the recording controller writes a heartbeat
to the store after each pass that read its source (a ref in the Git store,
a Lease in the cr store), and one older than --stale-after means it has
not read its source since (stopped, or its source is unreachable); a
warning on stderr says so with or without --exit-code. With the heartbeat
the controller records a source revision it refused (--verify-commits):
the report says which, why and since when, and --exit-code exits 1 while
the newest revision is refused. --watch prints the report again each time it
changes, every --interval, until interrupted. -o wide adds the Kubernetes
version and allocatable CPU and memory that pull agents report, and the
whole message; -o name prints cluster/<name> per member.`,
		Example: `  propagit status --repo https://git.example.com/fleet.git
  propagit status --repo https://git.example.com/fleet.git --cluster prod-eu --exit-code
  propagit status --works-store cr --hub-kubeconfig hub.kubeconfig -o json
  propagit status --repo https://git.example.com/fleet.git --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.storeReadOptions.bindFlags(cmd, "show only this member", 5*time.Second, "how often --watch reads the store (at least 100ms)")
	f := cmd.Flags()
	bindFormat(cmd, &o.output, "text", status.Formats, "output format")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 unless every member shown runs the newest revision applied and healthy, every RolloutPolicy's rollout completed, and the controller refuses no newer source revision")
	f.BoolVarP(&o.watch, "watch", "w", false, "print the report again whenever it changes, until interrupted")
	f.DurationVar(&o.staleAfter, "stale-after", status.DefaultStaleAfter, "a controller heartbeat older than this means it stopped recording (keep it above the controller's --interval)")
	return cmd
}

func (o *statusOptions) validate() error {
	if err := o.storeReadOptions.validate(); err != nil {
		return err
	}
	if o.staleAfter <= 0 {
		return fmt.Errorf("--stale-after %s: must be positive", o.staleAfter)
	}
	if o.watch && o.exitCode {
		return fmt.Errorf("--watch and --exit-code do not go together: --watch never ends on its own")
	}
	return nil
}

func (o *statusOptions) run(parent context.Context, w, stderr io.Writer) error {
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
		now := time.Now()
		if err := status.Write(w, rep, o.output, now); err != nil {
			return err
		}
		stopped := o.recorderStopped(rep, now)
		switch {
		case len(rep.Clusters) == 0:
			fmt.Fprintln(stderr, "nothing recorded: the store holds no Work (no controller records into it yet, or --repo/--works-store name another store)")
		case stopped != "":
			fmt.Fprintln(stderr, "warning: "+stopped)
		}
		rolledOut, _ := status.RolloutsDone(rep.Rollouts)
		if o.exitCode && (!rep.AllRunning() || stopped != "" || !rolledOut || rep.SourceRefused != nil) {
			return &ExitError{Code: 1}
		}
		return nil
	}
	return o.watchReports(ctx, st, w)
}

// recorderStopped says why the controller looks stopped, as
// status.JudgeRecorder judges its heartbeat: older than --stale-after, or
// far in the future; "" when it is recent or there is none (a store kept
// by a controller that writes none, or by none at all).
func (o *statusOptions) recorderStopped(rep *status.Report, now time.Time) string {
	hb := rep.RecorderHeartbeat
	switch status.JudgeRecorder(hb, now, o.staleAfter) {
	case status.RecorderAhead:
		// Written by a clock far ahead, or by someone else than the
		// controller: it proves nothing about the controller now.
		return fmt.Sprintf("the controller's heartbeat in the store is %s in the future (a clock far off, or not written by the controller): it cannot tell whether the controller still records",
			hb.Sub(now).Round(time.Second))
	case status.RecorderStale:
		return fmt.Sprintf("the controller last read its source and recorded %s ago (its heartbeat in the store, older than --stale-after %s): it is stopped or cannot read its source; what members run may be behind",
			now.Sub(*hb).Round(time.Second), o.staleAfter)
	}
	return ""
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
	rep, err := status.Build(inputs, newest)
	if err != nil {
		return nil, err
	}
	if hb, ok := st.works.(works.RecorderHeartbeats); ok {
		state, err := hb.RecorderHeartbeat(ctx)
		if err != nil {
			return nil, err
		}
		rep.SetRecorder(state)
	}
	if rep.Rollouts, err = readRollouts(ctx, st.works); err != nil {
		return nil, err
	}
	return rep, nil
}

// readRollouts reads where the rollouts stand from a store that keeps
// them; none from one that does not.
func readRollouts(ctx context.Context, ws works.Store) ([]status.RolloutRow, error) {
	rs, ok := ws.(works.RolloutStates)
	if !ok {
		return nil, nil
	}
	data, err := rs.Rollouts(ctx)
	if err != nil {
		return nil, err
	}
	return status.RolloutRows(data)
}

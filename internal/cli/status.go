package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/status"
)

type statusOptions struct {
	repo   gitOptions
	store  storeOptions
	output string
}

func newStatusCommand() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what each member runs: applied revision, health, drift",
		Long: `status reads the Work records and their per-cluster status from the
git store (the work branch and status refs of --repo) or the cr store (Work
custom resources on the hub) and prints the cluster table, the template table
and, for the newest revision, how many clusters run it applied and healthy.`,
		Example: `  propagit status --repo https://git.example.com/fleet.git
  propagit status --works-store cr --hub-kubeconfig hub.kubeconfig -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	o.repo.bindFlags(cmd, "repo", "the repository holding the work branch (git store)")
	o.store.bindFlags(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func (o *statusOptions) run(ctx context.Context, w io.Writer) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf(`--output must be "text" or "json", not %q`, o.output)
	}
	ctx = orBackground(ctx)
	st, cleanup, err := openStores(o.repo, o.store, "propagit-status-*")
	if err != nil {
		return err
	}
	defer cleanup()
	inputs, newest, err := gather(ctx, st, nil)
	if err != nil {
		return err
	}
	rep, err := status.Build(inputs, newest)
	if err != nil {
		return err
	}
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(w, rep, time.Now())
	return nil
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

func printReport(w io.Writer, r *status.Report, now time.Time) {
	fmt.Fprintln(w, r.Summary)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tMODE\tCLUSTER READY\tTAINTS\tREADY\tAPPLIED\tOBJECTS\tHEALTHY\tFAILED\tDRIFT\tLAST HEARD\tVERSION\tMESSAGE")
	for _, c := range r.Clusters {
		applied := shortRev(c.AppliedRevision)
		if c.AppliedRevision != c.WantRevision {
			applied += " (want " + shortRev(c.WantRevision) + ")"
		}
		heard := "never"
		if c.LastHeard != nil {
			heard = now.Sub(*c.LastHeard).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", c.Name, c.Mode, orDash(c.ClusterReady),
			orDash(strings.Join(c.Taints, ",")), c.Ready, applied, c.Objects, c.Healthy, c.Failed, c.Drift, heard,
			orDash(c.AgentVersion), truncate(c.Message, 60))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tCLUSTERS\tREPLICAS (READY/DESIRED)")
	for _, t := range r.Templates {
		reps := "-"
		if t.Workload {
			reps = fmt.Sprintf("%d/%d", t.ReadyReplicas, t.DesiredReplicas)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Template, strings.Join(t.Clusters, ","), reps)
	}
	_ = tw.Flush()
	printProblems(w, r)
	if len(r.Drift) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECENT DRIFT\tCLUSTER\tACTION\tBY\tFIELDS\tWHEN")
	for _, d := range r.Drift {
		fields := strings.Join(d.Fields, ",")
		if d.Deleted {
			fields = "(deleted)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Object, d.Cluster, d.Action, orDash(d.Manager), truncate(orDash(fields), 60),
			now.Sub(d.Time).Round(time.Second).String()+" ago")
	}
	_ = tw.Flush()
}

// printProblems prints the templates that failed to render and those no
// policy claims any more: each keeps what its clusters run.
func printProblems(w io.Writer, r *status.Report) {
	if len(r.RenderErrors) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RENDER ERROR (the cluster keeps its current objects)\tCLUSTER")
		for _, e := range r.RenderErrors {
			fmt.Fprintf(tw, "%s\t%s\n", e.Error, e.Cluster)
		}
		_ = tw.Flush()
	}
	if len(r.Unclaimed) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "UNCLAIMED (no policy selects it; it keeps running where it was)\tCLUSTERS")
		for _, u := range r.Unclaimed {
			fmt.Fprintf(tw, "%s\t%s\n", u.Template, strings.Join(u.Clusters, ","))
		}
		_ = tw.Flush()
	}
}

func shortRev(r string) string {
	if r == "" {
		return "-"
	}
	return workv1alpha1.ShortRevision(r)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

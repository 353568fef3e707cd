package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/termsafe"
)

// The printers of `propagit status` and `propagit wait`. Members, scripts
// and Git wrote much of what they print: control characters are escaped
// (termsafe).

// Formats are the formats Write knows: the text tables, the same wider,
// JSON, YAML, and cluster/<name> per member.
var Formats = []string{"text", "wide", "json", "yaml", "name"}

// Write prints rep in format, one of Formats; now is when the "ago" columns
// are counted from.
func Write(w io.Writer, rep *Report, format string, now time.Time) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "yaml":
		data, err := yaml.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case "name":
		w = termsafe.NewWriter(w)
		for _, c := range rep.Clusters {
			fmt.Fprintf(w, "cluster/%s\n", c.Name)
		}
		return nil
	}
	writeText(w, rep, now, format == "wide")
	return nil
}

// writeText prints the text report; wide adds what pull agents measure
// of their cluster and does not cut the message. Members, scripts and Git
// wrote much of it: control characters are escaped (termsafe), and inside
// free-text cells newlines and tabs too, so no message forges a row.
func writeText(w io.Writer, r *Report, now time.Time, wide bool) {
	w = termsafe.NewWriter(w)
	fmt.Fprintln(w, r.Summary)
	if r.SourceRefused != nil {
		fmt.Fprintln(w, termsafe.String(r.SourceRefused.Line(r.Revision)))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "CLUSTER\tMODE\tCLUSTER READY\tTAINTS\tREADY\tAPPLIED\tOBJECTS\tHEALTHY\tFAILED\tDRIFT\tLAST HEARD\tVERSION"
	if wide {
		head += "\tKUBERNETES\tCPU\tMEMORY"
	}
	fmt.Fprintln(tw, head+"\tMESSAGE")
	for _, c := range r.Clusters {
		applied := orDash(workv1alpha1.ShortRevision(c.AppliedRevision))
		if c.AppliedRevision != c.WantRevision {
			applied += " (want " + orDash(workv1alpha1.ShortRevision(c.WantRevision)) + ")"
		}
		heard := "never"
		if c.LastHeard != nil {
			heard = now.Sub(*c.LastHeard).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s", c.Name, c.Mode, orDash(c.ClusterReady),
			orDash(strings.Join(c.Taints, ",")), c.Ready, applied, c.Objects, c.Healthy, c.Failed, c.Drift, heard,
			orDash(c.AgentVersion))
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\n", orDash(c.KubernetesVersion), orDash(c.CPU), orDash(c.Memory), orDash(termsafe.String(c.Message)))
		} else {
			fmt.Fprintf(tw, "\t%s\n", truncate(termsafe.String(c.Message), 60))
		}
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
		fmt.Fprintf(tw, "%s\t%s\t%s\n", workv1alpha1.DisplayKey(t.Template), strings.Join(t.Clusters, ","), reps)
	}
	_ = tw.Flush()
	writeRollouts(w, r.Rollouts, now)
	writeProblems(w, r)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Object, d.Cluster, d.Action, orDash(termsafe.String(d.Manager)), truncate(orDash(fields), 60),
			now.Sub(d.Time).Round(time.Second).String()+" ago")
	}
	_ = tw.Flush()
}

// writeProblems prints the templates that failed to render, those the
// scheduler could not place and those no policy claims any more.
func writeProblems(w io.Writer, r *Report) {
	w = termsafe.NewWriter(w)
	if len(r.RenderErrors) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RENDER ERROR (the cluster keeps its current objects)\tCLUSTER")
		for _, e := range r.RenderErrors {
			fmt.Fprintf(tw, "%s\t%s\n", termsafe.String(e.Error), e.Cluster)
		}
		_ = tw.Flush()
	}
	if len(r.HelmHooks) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HELM HOOK NOT APPLIED (propagit does not run Helm hooks)\tCLUSTER")
		for _, e := range r.HelmHooks {
			fmt.Fprintf(tw, "%s\t%s\n", termsafe.String(e.Error), e.Cluster)
		}
		_ = tw.Flush()
	}
	if len(r.ScheduleErrors) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "NOT SCHEDULED")
		for _, e := range r.ScheduleErrors {
			fmt.Fprintln(w, termsafe.String(e))
		}
	}
	if len(r.Unclaimed) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "UNCLAIMED (no policy selects it; it keeps running where it was)\tCLUSTERS")
		for _, u := range r.Unclaimed {
			fmt.Fprintf(tw, "%s\t%s\n", workv1alpha1.DisplayKey(u.Template), strings.Join(u.Clusters, ","))
		}
		_ = tw.Flush()
	}
}

// WriteProgress prints the table of `propagit wait`, one row per member: what it applied, its Ready
// condition and why it has not reached the target.
func WriteProgress(w io.Writer, ps []Progress) {
	tw := tabwriter.NewWriter(termsafe.NewWriter(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tREACHED\tAPPLIED\tREADY\tMESSAGE")
	for _, p := range ps {
		reached := "no"
		if p.Reached {
			reached = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Cluster, reached, orDash(workv1alpha1.ShortRevision(p.AppliedRevision)), p.Ready, orDash(termsafe.String(p.Message)))
	}
	_ = tw.Flush()
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

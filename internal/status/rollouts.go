package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/rollout"
	"github.com/propagit/propagit/internal/termsafe"
)

// RolloutRow is where one RolloutPolicy's newest rollout stands.
type RolloutRow struct {
	Policy   string `json:"policy"`
	Revision string `json:"revision"`
	// Stable is the last revision that completed its rollout.
	Stable string        `json:"stable,omitempty"`
	Phase  rollout.Phase `json:"phase"`
	// Wave is the open wave; "" once complete.
	Wave string `json:"wave,omitempty"`
	// Given counts the clusters that took the revision; Healthy and
	// Failed, those of them healthy and failed.
	Given   int `json:"given"`
	Healthy int `json:"healthy"`
	Failed  int `json:"failed"`
	// SoakEnds is when the open wave's soak ends, while it soaks.
	SoakEnds *time.Time `json:"soakEnds,omitempty"`
	// Reason says why the rollout stopped.
	Reason string `json:"reason,omitempty"`
}

// RolloutRows reads the rollouts' document a works store keeps.
func RolloutRows(data []byte) ([]RolloutRow, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var doc rollout.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the recorded rollouts are unreadable: %w", err)
	}
	var out []RolloutRow
	for _, st := range doc.Rollouts {
		if st == nil {
			continue
		}
		row := RolloutRow{Policy: st.Policy, Revision: st.Revision, Stable: st.Stable, Phase: st.Phase, Wave: st.WaveName, Reason: st.Reason}
		for _, g := range st.Given {
			row.Given++
			switch {
			case g.Failed != "":
				row.Failed++
			case !g.HealthySince.IsZero():
				row.Healthy++
			}
		}
		if !st.SoakEnds.IsZero() {
			at := st.SoakEnds
			row.SoakEnds = &at
		}
		out = append(out, row)
	}
	return out, nil
}

// writeRollouts prints the rollouts, one line each.
func writeRollouts(w io.Writer, rows []RolloutRow, now time.Time) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLLOUT\tREVISION\tPHASE\tWAVE\tGIVEN\tHEALTHY\tFAILED\tSOAK LEFT\tSTABLE\tREASON")
	for _, r := range rows {
		soak := "-"
		if r.SoakEnds != nil {
			soak = max(r.SoakEnds.Sub(now), 0).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Policy, workv1alpha1.ShortRevision(r.Revision), r.Phase, orDash(r.Wave),
			r.Given, r.Healthy, r.Failed, soak, orDash(workv1alpha1.ShortRevision(r.Stable)), truncate(orDash(termsafe.String(r.Reason)), 80))
	}
	_ = tw.Flush()
}

// RolloutsDone reports whether every rollout completed, and names the
// ones that stopped (halted or rolled back).
func RolloutsDone(rows []RolloutRow) (done bool, stopped []string) {
	done = true
	for _, r := range rows {
		if r.Phase != rollout.Complete {
			done = false
		}
		if r.Phase.Stopped() {
			stopped = append(stopped, fmt.Sprintf("%s: %s of %s: %s", r.Policy, strings.ToLower(string(r.Phase)), workv1alpha1.ShortRevision(r.Revision), r.Reason))
		}
	}
	return done, stopped
}

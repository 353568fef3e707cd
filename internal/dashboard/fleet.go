package dashboard

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/status"
)

// Member states, as the fleet page filters them.
const (
	StateReady    = "Ready"
	StateFailing  = "Failing"
	StateNotReady = "NotReady"
	StateUnknown  = "Unknown"
)

// FleetRow is one member on the fleet page.
type FleetRow struct {
	status.ClusterRow
	// State sums up the member: Ready, Failing (its Work is not applied
	// and healthy), NotReady or Unknown (the cluster itself).
	State string
	// Behind is how many commits the applied revision is behind the
	// branch; -1 when unknown (no source, or older than the commits read).
	Behind int
	Meta   MemberMeta
	// Stale says the health shown is what the member last reported, not
	// its state now: the cluster is Unknown or NotReady (a silent pull
	// agent, an unreachable push member), so nothing reads it.
	Stale bool
}

type fleetBody struct {
	Rows    []FleetRow
	Columns []column
	Pager   pager
	Query   map[string]string
	States  []string
	Regions []string
	Counts  map[string]int
}

// ShowLabels says whether the Labels column has anything to show on this
// page: a column empty in every row is left out.
func (b *fleetBody) ShowLabels() bool {
	return slices.ContainsFunc(b.Rows, func(r FleetRow) bool { return r.Meta.Region != "" || len(r.Meta.Labels) > 0 })
}

// memberState sums up a member for filtering and for its badge.
func memberState(c status.ClusterRow) string {
	switch {
	case c.ClusterReady == "False":
		return StateNotReady
	case c.ClusterReady == "Unknown":
		return StateUnknown
	case c.Ready == "True":
		return StateReady
	case c.Ready == "Unknown":
		return StateUnknown
	}
	return StateFailing
}

// fleetRows builds every member's row.
func fleetRows(snap *Snapshot) []FleetRow {
	idx := map[string]int{}
	for i, c := range snap.Commits {
		idx[c.Hash] = i
	}
	rows := make([]FleetRow, 0, len(snap.Report.Clusters))
	for _, c := range snap.Report.Clusters {
		row := FleetRow{ClusterRow: c, State: memberState(c), Behind: -1, Meta: snap.Members[c.Name]}
		row.Stale = c.ClusterReady == "Unknown" || c.ClusterReady == "False"
		if i, ok := idx[c.AppliedRevision]; ok {
			row.Behind = i
		} else if snap.Commits == nil && c.AppliedRevision != "" && c.AppliedRevision == snap.Newest {
			row.Behind = 0
		}
		rows = append(rows, row)
	}
	return rows
}

func (s *Server) fleet(w http.ResponseWriter, r *http.Request) {
	s.servePage(w, r, "fleet", "Fleet", func(snap *Snapshot) (any, int) {
		q := r.URL.Query()
		all := fleetRows(snap)
		body := &fleetBody{Query: map[string]string{"q": q.Get("q"), "state": q.Get("state"), "region": q.Get("region"), "label": q.Get("label")},
			States: []string{StateReady, StateFailing, StateNotReady, StateUnknown}, Counts: map[string]int{}}
		regions := map[string]bool{}
		var rows []FleetRow
		for _, row := range all {
			body.Counts[row.State]++
			if row.Meta.Region != "" {
				regions[row.Meta.Region] = true
			}
			if keepMember(row, body.Query) {
				rows = append(rows, row)
			}
		}
		body.Regions = slices.Sorted(maps.Keys(regions))
		sortFleet(rows, q.Get("sort"), q.Get("order") == "desc")
		body.Pager = paginate(r, len(rows), s.opts.PageSize)
		body.Rows = rows[body.Pager.From:body.Pager.To]
		body.Columns = columns(r, "name", "Member", "mode", "Mode", "state", "State", "version", "Kubernetes",
			"applied", "Applied", "behind", "Behind", "healthy", "Healthy", "failed", "Failed", "drift", "Drifted", "heard", "Last heard")
		return body, http.StatusOK
	})
}

// keepMember applies the fleet filters: q (a part of the name), state,
// region and label (key or key=value).
func keepMember(row FleetRow, f map[string]string) bool {
	if f["q"] != "" && !strings.Contains(row.Name, f["q"]) {
		return false
	}
	if f["state"] != "" && row.State != f["state"] {
		return false
	}
	if f["region"] != "" && row.Meta.Region != f["region"] {
		return false
	}
	if l := f["label"]; l != "" {
		k, v, hasValue := strings.Cut(l, "=")
		got, ok := row.Meta.Labels[k]
		if !ok || (hasValue && got != v) {
			return false
		}
	}
	return true
}

// sortFleet orders rows by key (name when unknown), the name breaking
// ties so that pages are stable.
func sortFleet(rows []FleetRow, key string, desc bool) {
	by := func(a, b FleetRow) int {
		switch key {
		case "mode":
			return cmp.Compare(a.Mode, b.Mode)
		case "state":
			return cmp.Compare(a.State, b.State)
		case "version":
			return cmp.Compare(a.KubernetesVersion, b.KubernetesVersion)
		case "applied":
			return cmp.Compare(a.AppliedRevision, b.AppliedRevision)
		case "behind":
			return cmp.Compare(a.Behind, b.Behind)
		case "healthy":
			return cmp.Compare(a.Healthy, b.Healthy)
		case "failed":
			return cmp.Compare(a.Failed, b.Failed)
		case "drift":
			return cmp.Compare(a.Drift, b.Drift)
		case "heard":
			return cmp.Compare(unix(a.ClusterRow), unix(b.ClusterRow))
		}
		return 0
	}
	slices.SortStableFunc(rows, func(a, b FleetRow) int {
		c := by(a, b)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Name, b.Name))
	})
}

func unix(c status.ClusterRow) int64 {
	if c.LastHeard == nil {
		return 0
	}
	return c.LastHeard.UnixNano()
}

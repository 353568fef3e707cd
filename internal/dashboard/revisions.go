package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/status"
)

// RevisionRow is one commit and its rollout across the members.
type RevisionRow struct {
	source.Commit
	// Link is the commit's page on the Git host; "" for unknown hosts.
	Link string
	// Recorded: the store holds Works rendered from this commit or a later
	// one; until then every member is pending.
	Recorded bool
	Applied  int
	Healthy  int
	Failed   int
	Pending  int
	// Timed is how many members were seen applying this commit, and
	// Fastest/Slowest the time from the commit to the first refresh that
	// saw it applied (an upper bound, within one refresh interval).
	Timed            int
	Fastest, Slowest time.Duration
	RenderErrors     []status.RenderErrorRow
}

type revisionsBody struct {
	Rows   []RevisionRow
	Pager  pager
	Source bool
	// Rollouts are where the RolloutPolicies' newest rollouts stand.
	Rollouts []status.RolloutRow
	Now      time.Time
}

func (s *Server) revisions(w http.ResponseWriter, r *http.Request) {
	s.servePage(w, r, "revisions", "Revisions", func(snap *Snapshot) (any, int) {
		commits := snap.Commits
		if commits == nil {
			commits = recordedRevisions(snap)
		}
		body := &revisionsBody{Source: snap.Commits != nil, Rollouts: snap.Report.Rollouts, Now: snap.Taken}
		body.Pager = paginate(r, len(commits), s.opts.PageSize)
		idx := map[string]int{}
		for i, c := range commits {
			idx[c.Hash] = i
		}
		for i, c := range commits[body.Pager.From:body.Pager.To] {
			row, _ := s.rollout(snap, c, body.Pager.From+i, idx)
			body.Rows = append(body.Rows, row)
		}
		return body, http.StatusOK
	})
}

// recordedRevisions lists the revisions the records name when there is no
// source to read the history from: the newest first, the others unordered.
func recordedRevisions(snap *Snapshot) []source.Commit {
	var out []source.Commit
	seen := map[string]bool{"": true}
	add := func(rev string) {
		if !seen[rev] {
			seen[rev] = true
			out = append(out, source.Commit{Hash: rev})
		}
	}
	add(snap.Newest)
	for _, in := range snap.Inputs {
		add(in.Work.Spec.SourceRevision)
		if in.Status != nil {
			add(in.Status.AppliedRevision)
		}
	}
	return out
}

// Where a member stands with one commit.
const (
	RollHealthy     = "Healthy"
	RollProgressing = "Progressing"
	RollFailed      = "Failed"
	RollPending     = "Pending"
)

// MemberRoll is one member's part in a commit's rollout.
type MemberRoll struct {
	Cluster string
	// Applied: the member runs the commit, or a later one, or a Work the
	// commit did not change.
	Applied bool
	State   string
	Want    string
	Have    string
	// Took is the time from the commit to the refresh that saw it applied
	// (0 when unknown).
	Took    time.Duration
	Message string
}

// memberRoll says where member cr (whose Work wants want) stands with
// commit c at index ci of the history (newest 0); pos gives a revision's
// index. A failure counts against c only while it concerns c: the member
// has not reached c, or c is the target it is stuck on.
func (s *Server) memberRoll(cr status.ClusterRow, want string, c source.Commit, ci int, pos func(string) int) MemberRoll {
	applied := cr.AppliedRevision
	m := MemberRoll{Cluster: cr.Name, Want: want, Have: applied, Message: cr.Message}
	m.Applied = applied != "" && (pos(applied) <= ci || (applied == want && pos(want) >= ci))
	failing := cr.Failed > 0 || cr.Ready == "False"
	concerns := !m.Applied || (applied == want && pos(want) >= ci)
	switch {
	case failing && concerns:
		m.State = RollFailed
	case !m.Applied:
		m.State = RollPending
	case cr.Ready == "True":
		m.State = RollHealthy
	default:
		m.State = RollProgressing
	}
	if t := s.firstSeen(appliedKey(c.Hash, cr.Name)); !t.IsZero() && !c.Time.IsZero() && applied == c.Hash {
		m.Took = t.Sub(c.Time)
	}
	return m
}

// rollout counts the members that run commit c (at index ci, newest 0),
// and lists where each stands.
func (s *Server) rollout(snap *Snapshot, c source.Commit, ci int, idx map[string]int) (RevisionRow, []MemberRoll) {
	row := RevisionRow{Commit: c, Link: commitLink(s.opts.RepoURL, c.Hash)}
	pos := func(rev string) int {
		if i, ok := idx[rev]; ok {
			return i
		}
		return len(idx) // older than every commit listed
	}
	newest, known := idx[snap.Newest]
	row.Recorded = known && newest <= ci
	var members []MemberRoll
	for i, in := range snap.Inputs {
		cr := snap.Report.Clusters[clusterIndex(snap.Report, in.Work.Spec.Cluster, i)]
		m := MemberRoll{Cluster: cr.Name, State: RollPending, Want: in.Work.Spec.SourceRevision, Have: cr.AppliedRevision, Message: cr.Message}
		if row.Recorded {
			m = s.memberRoll(cr, in.Work.Spec.SourceRevision, c, ci, pos)
		}
		members = append(members, m)
		if m.Applied {
			row.Applied++
		}
		switch m.State {
		case RollHealthy:
			row.Healthy++
		case RollFailed:
			row.Failed++
		case RollPending:
			row.Pending++
		}
		if m.Took != 0 {
			if row.Timed == 0 || m.Took < row.Fastest {
				row.Fastest = m.Took
			}
			row.Slowest = max(row.Slowest, m.Took)
			row.Timed++
		}
	}
	if c.Hash == snap.Newest {
		row.RenderErrors = snap.Report.RenderErrors
	}
	return row, members
}

type revisionBody struct {
	Row     RevisionRow
	Members []MemberRoll
	Pager   pager
}

// revision is one commit's page: where each member stands with it.
func (s *Server) revision(w http.ResponseWriter, r *http.Request) {
	hash := r.URL.Query().Get("rev")
	s.servePage(w, r, "revision", "Revision "+workv1alpha1.DisplayRevision(hash), func(snap *Snapshot) (any, int) {
		commits := snap.Commits
		if commits == nil {
			commits = recordedRevisions(snap)
		}
		idx := map[string]int{}
		for i, c := range commits {
			idx[c.Hash] = i
		}
		ci, ok := idx[hash]
		if !ok {
			return &revisionBody{Row: RevisionRow{Commit: source.Commit{Hash: hash}}}, http.StatusNotFound
		}
		row, members := s.rollout(snap, commits[ci], ci, idx)
		body := &revisionBody{Row: row, Pager: paginate(r, len(members), s.opts.PageSize)}
		body.Members = members[body.Pager.From:body.Pager.To]
		return body, http.StatusOK
	})
}

// clusterIndex finds cluster's row in the report (sorted by name, as the
// inputs are; i is the likely position).
func clusterIndex(rep *status.Report, cluster string, i int) int {
	if i < len(rep.Clusters) && rep.Clusters[i].Name == cluster {
		return i
	}
	for j, c := range rep.Clusters {
		if c.Name == cluster {
			return j
		}
	}
	return 0
}

// commitLink is the commit's page on github.com or gitlab.com, from an
// https or scp-like remote; "" for any other host.
func commitLink(repo, hash string) string {
	if repo == "" || hash == "" {
		return ""
	}
	var host, path string
	if u, err := url.Parse(repo); err == nil && (u.Scheme == "https" || u.Scheme == "http" || u.Scheme == "ssh") {
		host, path = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(repo, "@"); ok && !strings.Contains(at, "/") {
		host, path, _ = strings.Cut(rest, ":")
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if path == "" || strings.Contains(path, "..") {
		return ""
	}
	switch host {
	case "github.com":
		return "https://github.com/" + path + "/commit/" + url.PathEscape(hash)
	case "gitlab.com":
		return "https://gitlab.com/" + path + "/-/commit/" + url.PathEscape(hash)
	}
	return ""
}

package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"time"

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
}

func (s *Server) revisions(w http.ResponseWriter, r *http.Request) {
	s.servePage(w, r, "revisions", "Revisions", func(snap *Snapshot) (any, int) {
		commits := snap.Commits
		if commits == nil {
			commits = recordedRevisions(snap)
		}
		body := &revisionsBody{Source: snap.Commits != nil}
		body.Pager = paginate(r, len(commits), s.opts.PageSize)
		idx := map[string]int{}
		for i, c := range commits {
			idx[c.Hash] = i
		}
		for i, c := range commits[body.Pager.From:body.Pager.To] {
			body.Rows = append(body.Rows, s.rollout(snap, c, body.Pager.From+i, idx))
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

// rollout counts the members that run commit c (at index ci, newest 0).
// A member runs c when it applied c or a later commit, or when its Work
// was last changed before c and it applied that (c did not touch it).
func (s *Server) rollout(snap *Snapshot, c source.Commit, ci int, idx map[string]int) RevisionRow {
	row := RevisionRow{Commit: c, Link: commitLink(s.opts.RepoURL, c.Hash)}
	pos := func(rev string) int {
		if i, ok := idx[rev]; ok {
			return i
		}
		return len(idx) // older than every commit listed
	}
	newest, known := idx[snap.Newest]
	row.Recorded = known && newest <= ci
	for i, in := range snap.Inputs {
		cr := snap.Report.Clusters[clusterIndex(snap.Report, in.Work.Spec.Cluster, i)]
		if !row.Recorded {
			row.Pending++
			continue
		}
		want, applied := in.Work.Spec.SourceRevision, cr.AppliedRevision
		ran := applied != "" && (pos(applied) <= ci || (applied == want && pos(want) >= ci))
		switch {
		case ran && cr.Ready == "True" && cr.Failed == 0:
			row.Applied++
			row.Healthy++
		case cr.Failed > 0 || cr.Ready == "False":
			row.Failed++
			if ran {
				row.Applied++
			}
		case ran:
			row.Applied++
		default:
			row.Pending++
		}
		if t := s.firstSeen(appliedKey(c.Hash, cr.Name)); !t.IsZero() && !c.Time.IsZero() && applied == c.Hash {
			d := t.Sub(c.Time)
			if row.Timed == 0 || d < row.Fastest {
				row.Fastest = d
			}
			row.Slowest = max(row.Slowest, d)
			row.Timed++
		}
	}
	if c.Hash == snap.Newest {
		row.RenderErrors = snap.Report.RenderErrors
	}
	return row
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

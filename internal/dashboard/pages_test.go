package dashboard

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/source"
)

// fleetSource serves the quickstart example as every revision, with a
// fixed history.
type fleetSource struct {
	t       testing.TB
	commits []source.Commit
	// edit, when set, changes a file as it is read.
	edit func(path string, data []byte) []byte
}

func (f *fleetSource) Commits(context.Context, int) ([]source.Commit, error) { return f.commits, nil }

func (f *fleetSource) Tree(context.Context, string) (filesys.FileSystem, error) {
	fs := filesys.MakeFsInMemory()
	root := "../../examples/quickstart/fleet"
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if f.edit != nil {
			data = f.edit(filepath.ToSlash(rel), data)
		}
		return fs.WriteFile("/"+filepath.ToSlash(rel), data)
	})
	return fs, err
}

// TestDashboardFleetFilterSortPage: the fleet page filters by state and
// name, sorts by a column both ways, and pages.
func TestDashboardFleetFilterSortPage(t *testing.T) {
	store := newMemStore()
	now := time.Now()
	for i, name := range []string{"eu-1", "eu-2", "us-1"} {
		d := deployment("default", "web", 1)
		st := readyStatus(rev1, now.Add(-time.Duration(i)*time.Minute), d)
		if name == "eu-2" {
			st.Conditions[0].Status = "False"
			st.Objects[0].Action = workv1alpha1.ActionFailed
		}
		store.put(t, name, rev1, st, d)
	}
	_, ts := newTestServer(t, store, nil) // 2 rows a page
	rows := func(body string) []string {
		var out []string
		for _, part := range strings.Split(body, `<tr data-member="`)[1:] {
			out = append(out, part[:strings.Index(part, `"`)])
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  string
	}{
		{"/", "eu-1,eu-2"},
		{"/?page=2", "us-1"},
		{"/?state=Failing", "eu-2"},
		{"/?state=Ready", "eu-1,us-1"},
		{"/?q=us", "us-1"},
		{"/?sort=heard", "us-1,eu-2"},
		{"/?sort=heard&order=desc", "eu-1,eu-2"},
		{"/?sort=failed&order=desc", "eu-2,eu-1"},
	} {
		_, body := get(t, ts, c.query)
		if got := strings.Join(rows(body), ","); got != c.want {
			t.Errorf("%s: members %s, want %s", c.query, got, c.want)
		}
	}
	_, body := get(t, ts, "/?sort=heard")
	mustContain(t, body, `aria-sort="ascending"`, `rel="next"`)
}

// TestDashboardRevisionsAndExplain: with a source, the revisions page
// counts each commit's rollout and links github.com commits, the fleet
// page shows how far behind a member is, and a template page carries the
// explain trace computed from the source.
func TestDashboardRevisionsAndExplain(t *testing.T) {
	store := newMemStore()
	now := time.Now()
	d := deployment("demo", "nginx", 2)
	store.put(t, "member1", rev1, readyStatus(rev1, now, d), d)
	store.put(t, "member2", rev2, readyStatus(rev1, now, d), d)
	src := &fleetSource{t: t, commits: []source.Commit{
		{Hash: rev2, Subject: "nginx: <b>3</b> replicas", Time: now.Add(-time.Minute)},
		{Hash: rev1, Subject: "quickstart", Time: now.Add(-time.Hour)}}}
	s, ts := newTestServer(t, store, func(o *Options) { o.Source = src; o.RepoURL = "git@github.com:acme/fleet.git" })

	_, body := get(t, ts, "/revisions")
	mustContain(t, body, `href="https://github.com/acme/fleet/commit/`+rev2+`"`, "nginx: &lt;b&gt;3&lt;/b&gt; replicas")
	// rev2 changed member2's Work, which still runs rev1: 1 of 2 applied.
	row := between(body, `data-revision="`+rev2+`"`, "</tr>")
	mustContain(t, row, `data-col="applied">1<`, `data-col="healthy" class="ok">1<`, `data-col="pending">1<`)
	row = between(body, `data-revision="`+rev1+`"`, "</tr>")
	mustContain(t, row, `data-col="applied">2<`)

	_, body = get(t, ts, "/revision?rev="+rev2)
	mustContain(t, between(body, `data-member="member1"`, "</tr>"), `data-state="Healthy"`)
	mustContain(t, between(body, `data-member="member2"`, "</tr>"), `data-state="Pending"`, workv1alpha1.ShortRevision(rev1))
	if res, _ := get(t, ts, "/revision?rev=nope"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown revision: status %d, want 404", res.StatusCode)
	}

	// member2 fails to apply rev2: a failure of rev2, not of rev1, which
	// it still runs.
	st := readyStatus(rev1, now, d)
	st.Conditions[0].Status = "False"
	st.Objects[0].Action = workv1alpha1.ActionFailed
	store.put(t, "member2", rev2, st, d)
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, ts, "/revisions")
	mustContain(t, between(body, `data-revision="`+rev2+`"`, "</tr>"), `data-col="failed" class="bad">1<`)
	mustContain(t, between(body, `data-revision="`+rev1+`"`, "</tr>"), `data-col="failed" class="">0<`, `data-col="applied">2<`)

	_, body = get(t, ts, "/?q=member2")
	mustContain(t, between(body, `data-member="member2"`, "</tr>"), "<td>1</td>") // one commit behind

	_, body = get(t, ts, "/template?name=Deployment.apps/demo/nginx")
	trace := between(body, `id="explain-trace"`, "</section>")
	mustContain(t, trace, "PropagationPolicy.policy.karmada.io/demo/nginx-propagation", "member1", "member2", "nginx-override")
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

func TestDashboardCommitLink(t *testing.T) {
	for repo, want := range map[string]string{
		"https://github.com/acme/fleet.git":        "https://github.com/acme/fleet/commit/abc",
		"https://token@gitlab.com/group/sub/fleet": "https://gitlab.com/group/sub/fleet/-/commit/abc",
		"ssh://git@github.com/acme/fleet.git":      "https://github.com/acme/fleet/commit/abc",
		"git@gitlab.com:acme/fleet.git":            "https://gitlab.com/acme/fleet/-/commit/abc",
		"https://git.example.com/acme/fleet.git":   "",
		"file:///srv/fleet.git":                    "",
		"https://github.com/../evil":               "",
	} {
		if got := commitLink(repo, "abc"); got != want {
			t.Errorf("%s: %q, want %q", repo, got, want)
		}
	}
}

// TestDashboardFleetLabelsAndRegions: the members' labels and regions come
// from their Cluster objects in Git, and the fleet page filters by them.
func TestDashboardFleetLabelsAndRegions(t *testing.T) {
	store := newMemStore()
	d := deployment("demo", "nginx", 2)
	for _, m := range []string{"member1", "member2"} {
		store.put(t, m, rev1, readyStatus(rev1, time.Now(), d), d)
	}
	src := &fleetSource{t: t, commits: []source.Commit{{Hash: rev1, Time: time.Now()}},
		edit: func(path string, data []byte) []byte {
			if path != "clusters/member1.yaml" {
				return data
			}
			s := strings.Replace(string(data), "  name: member1\n", "  name: member1\n  labels:\n    env: prod\n", 1)
			return []byte(strings.Replace(s, "spec:\n", "spec:\n  region: eu-west\n", 1))
		}}
	_, ts := newTestServer(t, store, func(o *Options) { o.Source = src })
	_, body := get(t, ts, "/")
	mustContain(t, between(body, `data-member="member1"`, "</tr>"), "region=eu-west", "env=prod")
	mustContain(t, body, "<option>eu-west</option>", `<th scope="col">Labels</th>`)
	// A page whose members have no label and no region has no Labels
	// column: a column empty in every row is left out, its cells too.
	_, body = get(t, ts, "/?q=member2")
	if strings.Contains(body, `<th scope="col">Labels</th>`) {
		t.Error("a page of members without labels has a Labels column")
	}
	if heads, cells := strings.Count(between(body, "<thead>", "</thead>"), "<th "), strings.Count(between(body, `data-member="member2"`, "</tr>"), "<td"); heads != cells+1 {
		t.Errorf("member2's row has %d cells under %d heads (one is the row's own)", cells, heads)
	}
	for query, want := range map[string]string{
		"/?region=eu-west": "member1", "/?label=env": "member1", "/?label=env%3Dprod": "member1", "/?label=env%3Ddev": "",
		"/?region=us": "",
	} {
		_, body := get(t, ts, query)
		var got []string
		for _, m := range []string{"member1", "member2"} {
			if strings.Contains(body, `data-member="`+m+`"`) {
				got = append(got, m)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: members %v, want %q", query, got, want)
		}
	}
}

// TestDashboardFailoverStory: the events page tells a failover from the
// records of three refreshes — the template placed on member1, evicted
// from it (at the time its record says), member1 not Ready and the
// template placed on member2 (when first seen), the old copy removed — and
// keeps the eviction once its record is gone with the copy.
func TestDashboardFailoverStory(t *testing.T) {
	store := newMemStore()
	clock := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	s, ts := newTestServer(t, store, func(o *Options) {
		o.PageSize = 100
		o.Now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	})
	d := deployment("demo", "web", 2)
	store.put(t, "member1", rev1, readyStatus(rev1, clock, d), d)
	store.put(t, "member2", rev1, readyStatus(rev1, clock, d))
	refresh := func() {
		t.Helper()
		if err := s.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	refresh()

	evicted := d.DeepCopy()
	ann := evicted.GetAnnotations()
	ann[workv1alpha1.AnnotationEvictedAt] = clock.Add(30 * time.Second).Format(time.RFC3339)
	ann[workv1alpha1.AnnotationEvictedReason] = "cluster NotReady for 10s"
	evicted.SetAnnotations(ann)
	w := store.put(t, "member1", rev2, nil, evicted)
	w.Annotations[workv1alpha1.AnnotationClusterReady] = "Unknown"
	store.Record(w)
	store.put(t, "member2", rev2, readyStatus(rev2, clock, d), d)
	refresh()

	w = store.put(t, "member1", rev2, nil)
	w.Annotations[workv1alpha1.AnnotationClusterReady] = "Unknown"
	store.Record(w)
	refresh()

	_, body := get(t, ts, "/events")
	var got []string
	for _, part := range strings.Split(body, `<tr data-kind="`)[1:] {
		row := part[:strings.Index(part, "</tr>")]
		got = append(got, part[:strings.Index(part, `"`)]+" "+between(row, "member", "<"))
	}
	want := []string{"Removed member1", "NotReady member1", "Placed member2", "Failover member1", "Placed member1"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events, newest first:\n got %v\nwant %v", got, want)
	}
}

// TestDashboardStaleHealth: the health of a member the controller cannot
// read (cluster Unknown or NotReady) is shown as its last report, not as
// its state now; a Ready member's is not marked.
func TestDashboardStaleHealth(t *testing.T) {
	store := newMemStore()
	now := time.Now()
	d := deployment("demo", "web", 1)
	store.put(t, "live", rev1, readyStatus(rev1, now, d), d)
	for name, ready := range map[string]string{"silent": "Unknown", "down": "False"} {
		w := store.put(t, name, rev1, readyStatus(rev1, now.Add(-time.Hour), d), d)
		w.Annotations[workv1alpha1.AnnotationClusterReady] = ready
		store.Record(w)
	}
	_, ts := newTestServer(t, store, func(o *Options) { o.PageSize = 100 })
	_, body := get(t, ts, "/")
	for name, stale := range map[string]bool{"live": false, "silent": true, "down": true} {
		part := body[strings.Index(body, `<tr data-member="`+name+`"`):]
		row := part[:strings.Index(part, "</tr>")]
		if got := strings.Contains(row, "last reported"); got != stale || !strings.Contains(row, "1/1") {
			t.Errorf("member %s: row marked as last reported = %v, want %v (and its 1/1 healthy kept):\n%s", name, got, stale, row)
		}
	}
}

// TestDashboardUnschedulableTemplates: a template the scheduler placed
// nowhere has no member and so no row; the templates page lists it with
// the scheduler's reason.
func TestDashboardUnschedulableTemplates(t *testing.T) {
	store := newMemStore()
	d := deployment("demo", "web", 1)
	w := store.put(t, "m1", rev1, readyStatus(rev1, time.Now(), d), d)
	w.Annotations[workv1alpha1.AnnotationScheduleErrors] = "Deployment.apps/demo/big: no cluster fits: m1: insufficient cpu (placed nowhere)"
	store.Record(w)
	_, ts := newTestServer(t, store, nil)
	_, body := get(t, ts, "/templates")
	mustContain(t, body, "Cannot be scheduled (1)", "<code>Deployment.apps/demo/big: no cluster fits: m1: insufficient cpu (placed nowhere)</code>")
	store2 := newMemStore()
	store2.put(t, "m1", rev1, readyStatus(rev1, time.Now(), d), d)
	_, ts2 := newTestServer(t, store2, nil)
	if _, body := get(t, ts2, "/templates"); strings.Contains(body, "Cannot be scheduled") {
		t.Error("the templates page lists unschedulable templates when there are none")
	}
}

// TestDashboardCommitToApplied: the time from a commit to its apply is
// shown for applies the dashboard saw happen, and not for those it found
// done when it started.
func TestDashboardCommitToApplied(t *testing.T) {
	store := newMemStore()
	clock := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	d := deployment("demo", "nginx", 2)
	store.put(t, "member1", rev1, readyStatus(rev1, clock, d), d)
	src := &fleetSource{t: t, commits: []source.Commit{{Hash: rev2, Time: clock.Add(time.Minute)}, {Hash: rev1, Time: clock}}}
	s, ts := newTestServer(t, store, func(o *Options) {
		o.Source = src
		o.Now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	})
	store.put(t, "member1", rev2, readyStatus(rev2, clock, d), d) // applied between the reads at 8:01 and 8:02
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, ts, "/revisions")
	mustContain(t, between(body, `data-revision="`+rev2+`"`, "</tr>"), "1m–1m (1 members)")
	if row := between(body, `data-revision="`+rev1+`"`, "</tr>"); strings.Contains(row, "members)") {
		t.Errorf("rev1 was applied before the dashboard started, yet a time is shown: %s", row)
	}
}

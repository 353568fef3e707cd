package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

const (
	refusedBanner = `<p class="alert" role="alert" id="source-refused">`
	staleBanner   = `<p class="alert" role="alert" id="recorder-stale">`
	aheadBanner   = `<p class="alert" role="alert" id="recorder-ahead">`
)

// recorderPages are the pages the banners must be on: every page, a
// template's own included.
func recorderPages(d *unstructured.Unstructured) []string {
	return []string{"/", "/templates", "/template?name=" + url.QueryEscape(workv1alpha1.KeyOf(d).String()), "/revisions", "/events"}
}

// TestDashboardSourceRefusedBanner: with the Works in a real Git store,
// a source revision the controller refused and recorded with its
// heartbeat shows on every page as an alert with the revision, the
// reason (markup in it escaped), since when in UTC and what members
// keep, as `propagit status` prints it; /api/report.json carries it as
// status -o json does; once the controller clears it, no page has an
// alert and the pages' ETag changed so open pages swap it away.
func TestDashboardSourceRefusedBanner(t *testing.T) {
	ctx := workstest.Ctx(t)
	remote := workstest.FileRemote(t)
	store, err := gitstore.New(gitstore.Options{URL: remote.URL})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second) // a commit time has seconds
	d := deployment("demo", "nginx", 2)
	raw, err := workv1alpha1.EncodeManifests([]*unstructured.Unstructured{d})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, rev1, []*workv1alpha1.Work{{Spec: workv1alpha1.WorkSpec{Cluster: "member1", SourceRevision: rev1, Manifests: raw}}}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutStatus(ctx, "member1", readyStatus(rev1, now, d)); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 12, 3, 18, 0, 0, 0, time.FixedZone("CET", 3600)) // 17:00 UTC
	evil := `<script>alert("x")</script>`
	if err := store.PutRecorderHeartbeat(ctx, works.RecorderState{At: now, RefusedRevision: rev2,
		RefusedReason: "commit 2222222: not signed " + evil, RefusedSince: since}); err != nil {
		t.Fatal(err)
	}
	s, ts := newTestServer(t, nil, func(o *Options) {
		o.Works, o.Status = store, store
		o.Now = func() time.Time { return now.Add(time.Minute) }
	})

	var tags []string
	for _, path := range recorderPages(d) {
		res, body := get(t, ts, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, res.StatusCode)
		}
		tags = append(tags, res.Header.Get("ETag"))
		banner := between(body, refusedBanner, "</p>")
		if banner == "" {
			t.Errorf("%s: no banner on the refused revision", path)
			continue
		}
		want := refusedBanner + "Source revision <code>2222222</code> refused: commit 2222222: not signed &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" +
			` (since <time datetime="2026-12-03T17:00:00Z">2026-12-03T17:00:00Z</time>); members keep <code>1111111</code>`
		if banner != want {
			t.Errorf("%s: banner\n%s\nwant\n%s", path, banner, want)
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: the reason is on the page unescaped", path)
		}
		if strings.Contains(body, staleBanner) || strings.Contains(body, aheadBanner) {
			t.Errorf("%s: a heartbeat banner beside a heartbeat a minute old", path)
		}
	}

	_, body := get(t, ts, "/api/report.json")
	var rep struct {
		RecorderHeartbeat time.Time `json:"recorderHeartbeat"`
		SourceRefused     *struct {
			Revision, Reason string
			Since            time.Time
		} `json:"sourceRefused"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if f := rep.SourceRefused; f == nil || f.Revision != rev2 || f.Reason != "commit 2222222: not signed "+evil || !f.Since.Equal(since) {
		t.Errorf("report.json sourceRefused %+v, want %s refused since %s", f, rev2, since)
	}
	if !rep.RecorderHeartbeat.Equal(now) {
		t.Errorf("report.json recorderHeartbeat %s, want %s", rep.RecorderHeartbeat, now)
	}

	// The next revision verifies: the controller clears the refusal.
	if err := store.PutRecorderHeartbeat(ctx, works.RecorderState{At: now.Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, path := range recorderPages(d) {
		res, body := get(t, ts, path, "If-None-Match", tags[i])
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d with the ETag of the page that had the banner, want 200 (the banner goes)", path, res.StatusCode)
		}
		if strings.Contains(body, `role="alert"`) {
			t.Errorf("%s: an alert after the refusal was cleared: %s", path, between(body, `role="alert"`, "</p>"))
		}
	}
}

// TestDashboardRecorderHeartbeatBanner: a controller heartbeat older than
// five minutes shows on every page as an alert saying since when it has
// not recorded (4m59s does not), one far in the future says it proves
// nothing, and none at all (a store no controller of this version wrote)
// shows nothing; a heartbeat that moves while fresh leaves the pages and
// their ETags alone.
func TestDashboardRecorderHeartbeatBanner(t *testing.T) {
	store := newMemStore()
	ctx := context.Background()
	hb := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	clock := hb.Add(time.Minute)
	d := deployment("demo", "nginx", 2)
	store.put(t, "member1", rev1, readyStatus(rev1, hb, d), d)
	s, ts := newTestServer(t, store, func(o *Options) { o.Now = func() time.Time { return clock } })
	pages := recorderPages(d)
	check := func(step, want string) {
		t.Helper()
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		for _, path := range pages {
			_, body := get(t, ts, path)
			switch {
			case want == "":
				if strings.Contains(body, `role="alert"`) {
					t.Errorf("%s: %s: an alert: %s", step, path, between(body, `role="alert"`, "</p>"))
				}
			case !strings.Contains(body, want):
				t.Errorf("%s: %s: no %q", step, path, want)
			}
		}
	}
	check("no heartbeat", "")

	beat := func(at time.Time) {
		t.Helper()
		if err := store.PutRecorderHeartbeat(ctx, works.RecorderState{At: at}); err != nil {
			t.Fatal(err)
		}
	}
	beat(hb)
	clock = hb.Add(5*time.Minute - time.Second)
	check("4m59s old", "")
	res, _ := get(t, ts, "/")
	tag := res.Header.Get("ETag")
	beat(hb.Add(10 * time.Second)) // the controller beats: nothing shown changes
	check("beat again", "")
	if res, _ := get(t, ts, "/", "If-None-Match", tag); res.StatusCode != http.StatusNotModified {
		t.Errorf("a fresh heartbeat that moved: status %d, want 304 (the pages did not change)", res.StatusCode)
	}

	beat(hb)
	clock = hb.Add(5 * time.Minute)
	check("5m old", staleBanner+`The controller has not recorded since <time datetime="2026-12-03T17:00:00Z">2026-12-03T17:00:00Z</time>: it is stopped or cannot read its source`)
	if res, _ := get(t, ts, "/", "If-None-Match", tag); res.StatusCode != http.StatusOK {
		t.Errorf("a heartbeat gone stale: status %d, want 200 (the banner comes)", res.StatusCode)
	}
	clock = hb.Add(2 * time.Hour)
	check("2h old", staleBanner+`The controller has not recorded since <time datetime="2026-12-03T17:00:00Z">`)

	beat(clock.Add(2 * time.Minute))
	check("2m ahead", aheadBanner+`The controller's heartbeat in the store, <time datetime="2026-12-03T19:02:00Z">2026-12-03T19:02:00Z</time>, is in the future`)

	beat(clock.Add(-time.Minute))
	check("fresh again", "")
}

// unreadableBeat is a store whose recorder heartbeat cannot be read (a hub
// Role without the Lease rule, a client whose scheme lacks Leases).
type unreadableBeat struct{ *memStore }

func (unreadableBeat) RecorderHeartbeat(context.Context) (works.RecorderState, error) {
	return works.RecorderState{}, errors.New(`no kind is registered for the type v1.Lease`)
}

// TestDashboardHeartbeatUnreadable: a heartbeat that cannot be read is
// said on every page, and the members still show: it does not blank the
// dashboard.
func TestDashboardHeartbeatUnreadable(t *testing.T) {
	store := newMemStore()
	d := deployment("demo", "nginx", 2)
	store.put(t, "member1", rev1, readyStatus(rev1, time.Now(), d), d)
	_, ts := newTestServer(t, store, func(o *Options) { o.Works = unreadableBeat{store} })
	for _, path := range recorderPages(d) {
		res, body := get(t, ts, path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200", path, res.StatusCode)
		}
		mustContain(t, body, `id="recorder-unread">failed to read the controller&#39;s heartbeat: no kind is registered`)
	}
	_, body := get(t, ts, "/")
	mustContain(t, body, `data-member="member1"`)
}

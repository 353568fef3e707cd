package dashboard

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

const (
	rev1 = "1111111111111111111111111111111111111111"
	rev2 = "2222222222222222222222222222222222222222"
)

// TestDashboardEscapesNamesFromGit: a member and a template named with
// markup, as a hostile commit could, are shown as text on every page.
func TestDashboardEscapesNamesFromGit(t *testing.T) {
	store := newMemStore()
	evil := `<script>alert("x")</script>`
	d := deployment("default", `web"><img src=x onerror=alert(1)>`, 2)
	st := readyStatus(rev1, time.Now(), d)
	st.Message = evil
	w := store.put(t, "m1"+evil, rev1, st, d)
	w.Annotations[workv1alpha1.AnnotationRenderErrors] = evil
	store.Record(w)
	_, ts := newTestServer(t, store, nil)
	name := workv1alpha1.KeyOf(d).String()
	for _, path := range []string{"/", "/revisions", "/templates", "/events", "/template?name=" + strings.ReplaceAll(name, " ", "%20")} {
		res, body := get(t, ts, path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, res.StatusCode)
		}
		for _, raw := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s: the page holds %q unescaped", path, raw)
			}
		}
	}
	_, body := get(t, ts, "/")
	mustContain(t, body, "m1&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
}

// inlineHandler finds an inline event handler attribute (onclick=...).
var inlineHandler = regexp.MustCompile(`\son[a-z]+=`)

// TestDashboardSecurityHeaders: every response, the static files and
// errors included, carries the strict CSP and refuses framing and sniffing.
func TestDashboardSecurityHeaders(t *testing.T) {
	_, ts := newTestServer(t, newMemStore(), nil)
	if res, _ := get(t, ts, "/static/"); res.StatusCode != http.StatusNotFound {
		t.Errorf("/static/: status %d, want 404 (no listing)", res.StatusCode)
	}
	for _, path := range []string{"/", "/static/live.js", "/static/style.css", "/nowhere", "/static/"} {
		res, _ := get(t, ts, path)
		if got := res.Header.Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s: CSP %q, want %q", path, got, CSP)
		}
		if !strings.Contains(CSP, "script-src 'self'") || strings.Contains(CSP, "unsafe-inline") {
			t.Errorf("CSP allows inline script: %s", CSP)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, res.Header)
		}
	}
	for _, path := range []string{"/", "/revisions", "/revision?rev=x", "/templates", "/template?name=x", "/events"} {
		_, body := get(t, ts, path)
		if strings.Contains(body, "<script>") || strings.Contains(body, "style=") || strings.Contains(body, "<style") || inlineHandler.MatchString(body) {
			t.Errorf("%s holds inline script or style, which the CSP blocks", path)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", nil)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405 (read-only)", res.StatusCode)
	}
}

// TestDashboardRedactsSecrets: the rendered manifest of a Secret shows
// neither its data nor its stringData values.
func TestDashboardRedactsSecrets(t *testing.T) {
	store := newMemStore()
	sec := object("v1", "Secret", "default", "db", map[string]any{
		"data":       map[string]any{"password": "c2VjcmV0LXZhbHVl"},
		"stringData": map[string]any{"token": "plain-token-value"}})
	ann := sec.GetAnnotations()
	ann["kubectl.kubernetes.io/last-applied-configuration"] = `{"data":{"password":"c2VjcmV0LXZhbHVl"}}`
	sec.SetAnnotations(ann)
	store.put(t, "m1", rev1, readyStatus(rev1, time.Now(), sec), sec)
	_, ts := newTestServer(t, store, nil)
	res, body := get(t, ts, "/template?name=Secret.core/default/db")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	for _, secret := range []string{"c2VjcmV0LXZhbHVl", "plain-token-value"} {
		if strings.Contains(body, secret) {
			t.Errorf("the page shows the Secret value %q", secret)
		}
	}
	mustContain(t, body, "password: "+Redacted, "token: "+Redacted)
}

// TestDashboardToken: with a token, a request without it or with another
// is refused; with a user header, a request the proxy did not mark is.
func TestDashboardToken(t *testing.T) {
	_, ts := newTestServer(t, newMemStore(), func(o *Options) { o.Token = "s3cret" })
	for _, c := range []struct {
		headers []string
		want    int
	}{
		{nil, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{[]string{"Authorization", "s3cret"}, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer s3cret"}, http.StatusOK},
	} {
		if res, _ := get(t, ts, "/static/style.css", c.headers...); res.StatusCode != c.want {
			t.Errorf("%v: status %d, want %d", c.headers, res.StatusCode, c.want)
		}
	}
	_, proxied := newTestServer(t, newMemStore(), func(o *Options) { o.UserHeader = "X-Forwarded-User" })
	if res, _ := get(t, proxied, "/"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the proxy header: status %d, want 401", res.StatusCode)
	}
	if res, _ := get(t, proxied, "/", "X-Forwarded-User", "ana"); res.StatusCode != http.StatusOK {
		t.Errorf("with the proxy header: status %d, want 200", res.StatusCode)
	}
}

// TestDashboardETag: an unchanged page answers 304 to its ETag, and a
// change in the records gives it a new one.
func TestDashboardETag(t *testing.T) {
	store := newMemStore()
	d := deployment("default", "web", 2)
	store.put(t, "m1", rev1, readyStatus(rev1, time.Now(), d), d)
	s, ts := newTestServer(t, store, nil)
	res, _ := get(t, ts, "/")
	tag := res.Header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	if res, body := get(t, ts, "/", "If-None-Match", tag); res.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("same version: status %d, body %d bytes; want 304 and none", res.StatusCode, len(body))
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res, _ := get(t, ts, "/", "If-None-Match", tag); res.StatusCode != http.StatusNotModified {
		t.Errorf("refreshed without change: status %d, want 304", res.StatusCode)
	}
	if res, _ := get(t, ts, "/?state=Ready", "If-None-Match", tag); res.StatusCode != http.StatusOK {
		t.Errorf("another query: status %d, want 200", res.StatusCode)
	}
	store.put(t, "m1", rev2, readyStatus(rev2, time.Now(), d), d)
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, body := get(t, ts, "/", "If-None-Match", tag)
	if res.StatusCode != http.StatusOK || res.Header.Get("ETag") == tag {
		t.Errorf("records changed: status %d, ETag %s (was %s)", res.StatusCode, res.Header.Get("ETag"), tag)
	}
	mustContain(t, body, workv1alpha1.ShortRevision(rev2))
	if res, _ := get(t, ts, "/api/report.json", "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusOK {
		t.Errorf("the JSON of another URL shares the page's ETag: status %d", res.StatusCode)
	}
}

package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
)

// request is what the fake Git host received.
type request struct {
	Method, Path, Auth, PrivateToken, ContentType string
	Body                                          map[string]any
}

// host records every request and answers 201, as both APIs do.
type host struct {
	mu   sync.Mutex
	seen []request
}

func (h *host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(data, &body)
	h.mu.Lock()
	h.seen = append(h.seen, request{Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization"),
		PrivateToken: r.Header.Get("PRIVATE-TOKEN"), ContentType: r.Header.Get("Content-Type"), Body: body})
	h.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (h *host) requests() []request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]request(nil), h.seen...)
}

const sha = "4f2c9e1d7b3a5c6e8f0a1b2c3d4e5f6a7b8c9d0e"

// The GitHub sink follows GitHub's "create a commit status" contract:
// POST /repos/{owner}/{repo}/statuses/{sha}, bearer token, JSON state
// (pending/success/failure), description and context.
func TestGitHubCommitStatus(t *testing.T) {
	h := &host{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := New(logr.Discard(), 5*time.Second, &GitHub{BaseURL: srv.URL, Owner: "acme", Repo: "fleet", Token: "ghp_test"})
	ctx := t.Context()
	n.Observe(ctx, Rollout{Revision: sha, Total: 3, Healthy: 1})
	n.Observe(ctx, Rollout{Revision: sha, Total: 3, Healthy: 1}) // the same: not sent again
	n.Wait()
	n.Observe(ctx, Rollout{Revision: sha, Total: 3, Healthy: 3})
	n.Wait()
	want := []request{
		{Method: "POST", Path: "/repos/acme/fleet/statuses/" + sha, Auth: "Bearer ghp_test", ContentType: "application/json",
			Body: map[string]any{"state": "pending", "description": "propagit: 1/3 clusters healthy", "context": "propagit"}},
		{Method: "POST", Path: "/repos/acme/fleet/statuses/" + sha, Auth: "Bearer ghp_test", ContentType: "application/json",
			Body: map[string]any{"state": "success", "description": "propagit: 3/3 clusters healthy", "context": "propagit"}},
	}
	if d := cmp.Diff(want, h.requests()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// The GitLab sink follows GitLab's "set the pipeline status of a commit"
// contract: POST /api/v4/projects/{url-encoded path}/statuses/{sha},
// PRIVATE-TOKEN header, state running/success/failed, name, description.
func TestGitLabCommitStatus(t *testing.T) {
	h := &host{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := New(logr.Discard(), 5*time.Second, &GitLab{BaseURL: srv.URL, Project: "acme/fleet", Token: "glpat-test"})
	n.Observe(t.Context(), Rollout{Revision: sha, Total: 2, Healthy: 1, Failed: 1})
	n.Wait()
	want := []request{{Method: "POST", Path: "/api/v4/projects/acme%2Ffleet/statuses/" + sha, PrivateToken: "glpat-test",
		ContentType: "application/json", Body: map[string]any{"state": "failed", "description": "propagit: 1/2 clusters healthy, 1 failed", "name": "propagit"}}}
	if d := cmp.Diff(want, h.requests()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// The webhook sink posts a Slack-compatible message with the rollout.
func TestWebhookIsSlackCompatible(t *testing.T) {
	h := &host{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := New(logr.Discard(), 5*time.Second, &Webhook{URL: srv.URL + "/hooks/T000?secret=x"})
	n.Observe(t.Context(), Rollout{Revision: sha, Total: 4, Healthy: 4})
	n.Wait()
	got := h.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	b := got[0].Body
	if b["text"] != "propagit: 4/4 clusters healthy: revision 4f2c9e1 is success" || b["state"] != "success" || b["healthy"] != float64(4) {
		t.Errorf("payload %v", b)
	}
}

// A host that refuses is logged, and an error names the URL without its
// query (where webhook secrets live).
func TestFailedPostIsAnErrorWithoutSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }))
	defer srv.Close()
	err := (&Webhook{URL: srv.URL + "/hook?token=s3cret"}).Send(t.Context(), Rollout{Revision: sha, Total: 1})
	if err == nil || !contains(err.Error(), "403") || contains(err.Error(), "s3cret") {
		t.Fatalf("error %v: want the status and no secret", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

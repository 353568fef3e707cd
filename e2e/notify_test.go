package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/notify"
)

// gitHost stands for GitHub's API: it records every commit status posted,
// checking the documented path and bearer token.
type gitHost struct {
	t        *testing.T
	mu       sync.Mutex
	statuses map[string][]map[string]any // by commit
}

func (h *gitHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var sha string
	if _, err := fmt.Sscanf(r.URL.Path, "/repos/acme/fleet/statuses/%s", &sha); err != nil || r.Method != http.MethodPost {
		h.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer test-token" {
		h.t.Errorf("status posted with Authorization %q", r.Header.Get("Authorization"))
	}
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		h.t.Errorf("status body is not JSON: %s", data)
	}
	h.mu.Lock()
	h.statuses[sha] = append(h.statuses[sha], body)
	h.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (h *gitHost) last(sha string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.statuses[sha]; len(s) > 0 {
		return s[len(s)-1]
	}
	return nil
}

// TestOpsCommitStatusFollowsTheRollout: with GitHub notifications on, the
// controller posts a commit status on each revision it rolls out, which
// ends "success" with "propagit: 2/2 clusters healthy" once both real
// members run it.
func TestOpsCommitStatusFollowsTheRollout(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	ns := randomNamespace("notify")
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, memberNames(members)...)
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	rev1 := co.CommitPush("app v1")

	host := &gitHost{t: t, statuses: map[string][]map[string]any{}}
	srv := httptest.NewServer(host)
	t.Cleanup(srv.Close)
	opts := controllerOptions()
	opts.Notifier = notify.New(logr.Discard(), 10*time.Second, &notify.GitHub{BaseURL: srv.URL, Owner: "acme", Repo: "fleet", Token: "test-token"})
	ctrl := startControllerOpts(t, newSetup(t, remote, members...), opts)

	success := func(rev string) func() (bool, string) {
		return func() (bool, string) {
			s := host.last(rev)
			return s != nil && s["state"] == "success" && s["description"] == "propagit: 2/2 clusters healthy" && s["context"] == "propagit",
				fmt.Sprintf("last status on %s: %v", e2etest.Short(rev), s)
		}
	}
	eventually(t, converge, success(rev1))

	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v2"))
	rev2 := co.CommitPush("app v2")
	ctrl.waitRevision(rev2)
	eventually(t, converge, success(rev2))
}

package notify

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A Git host that answers with a redirect to another host must not make
// the sink send its token there: Go's client drops Authorization across
// hosts but forwards PRIVATE-TOKEN (and re-posts the body on 307/308).
// No sink follows a redirect; the error reports the status instead.
func TestNoTokenAcrossARedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PRIVATE-TOKEN") != "" || r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer other.Close()
	// other listens on 127.0.0.1; name it "localhost" so it is another host.
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	target := "http://localhost:" + port + "/collect"
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, code)
		}))
		sinks := map[string]Sink{
			"gitlab":  &GitLab{BaseURL: host.URL, Project: "acme/fleet", Token: "glpat-s3cret"},
			"github":  &GitHub{BaseURL: host.URL, Owner: "acme", Repo: "fleet", Token: "ghp_s3cret"},
			"webhook": &Webhook{URL: host.URL + "/hooks/T0/B0/s3cret"},
		}
		for name, s := range sinks {
			err := s.Send(t.Context(), Rollout{Revision: sha, Total: 1})
			if err == nil || !strings.Contains(err.Error(), "redirect") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s, %d: error %v, want a redirect refused, without the secret", name, code, err)
			}
		}
		host.Close()
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other host received %d requests with a token", n)
	}
}

// An unreachable sink's error (Go's *url.Error quotes the whole URL) names
// the host but neither a query secret, a user's password nor a Slack-style
// path token.
func TestUnreachableSinkErrorHasNoSecret(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now: connection refused
	for _, u := range []string{
		"http://" + addr + "/services/T000/B000/s3cretPathToken",
		"http://" + addr + "/hook?token=s3cretQuery",
		"http://user:s3cretPassword@" + addr + "/hook",
		"http://" + addr + "/hook#s3cretFragment",
		"http://" + addr + "/hook?token=s3cretBad%zz", // an invalid URL: parsing fails
	} {
		err := (&Webhook{URL: u}).Send(t.Context(), Rollout{Revision: sha, Total: 1})
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error %v: want an error without the secret", err)
		}
	}
	err = (&GitLab{BaseURL: "http://" + addr, Project: "acme/fleet", Token: "glpat-s3cret"}).Send(t.Context(), Rollout{Revision: sha, Total: 1})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), addr) {
		t.Errorf("gitlab error %v: want one naming %s without the token", err, addr)
	}
}

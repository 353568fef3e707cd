package webhook

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// readCounter counts the requests whose body the handler began to read.
type readCounter struct {
	io.ReadCloser
	once    atomic.Bool
	started *atomic.Int32
}

func (r *readCounter) Read(p []byte) (int, error) {
	if r.once.CompareAndSwap(false, true) {
		r.started.Add(1)
	}
	return r.ReadCloser.Read(p)
}

// TestSlowUnauthenticatedBodiesTakeNoSlot: requests that claim to be GitHub
// pushes and never finish their bodies used to hold every in-flight slot
// for BodyTimeout, so a genuine signed push got 503 for as long as the
// attacker kept reconnecting. A slot is now taken only once the signature
// is checked: with more stalled requests than slots being read, genuine
// GitHub, GitLab and generic notifications are answered at once.
func TestSlowUnauthenticatedBodiesTakeNoSlot(t *testing.T) {
	const inFlight, attackers = 2, 8
	f := newFixture(t, func(o *Options) { o.MaxInFlight, o.BodyTimeout = inFlight, time.Minute })
	var started atomic.Int32
	mux := http.NewServeMux()
	mux.Handle(Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hub-Signature-256") == "sha256=00" { // an attacker's
			r.Body = &readCounter{ReadCloser: r.Body, started: &started}
		}
		f.handler.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range attackers {
		if c := stall(t, srv.Listener.Addr().String(), 1, []byte("{")); c != nil {
			open = append(open, c)
		}
	}
	// Wait until the handler reads at least as many stalled bodies as there
	// are slots: from then on, a slot taken before the read is held.
	for deadline := time.Now().Add(10 * time.Second); started.Load() < inFlight; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the handler read %d stalled bodies, want at least %d", started.Load(), inFlight)
		}
	}
	body := pushBody("refs/heads/main")
	for name, req := range map[string]*http.Request{
		"github":  githubRequest("push", body, sign(githubSecret, body)),
		"gitlab":  gitlabRequest("Push Hook", body, string(gitlabToken)),
		"generic": genericRequest(http.MethodPost, "Bearer "+string(genericToken)),
	} {
		out, _ := http.NewRequest(http.MethodPost, srv.URL+Path, bytes.NewReader(body))
		out.Header = req.Header
		resp, err := srv.Client().Do(out)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("%s with %d stalled requests open: status %d, want 202", name, attackers, resp.StatusCode)
		}
	}
	if got := len(f.triggered()); got != 3 {
		t.Errorf("%d triggers, want 3", got)
	}
}

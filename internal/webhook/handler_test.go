package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRateLimitRefusesAfterTheBurst(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.RatePerSecond, o.Burst = 1, 3 })
	auth := "Bearer " + string(genericToken)
	var codes []int
	for range 5 {
		codes = append(codes, f.do(genericRequest(http.MethodPost, auth)).Code)
	}
	want := []int{202, 202, 202, 429, 429}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	if got := len(f.triggered()); got != 3 {
		t.Errorf("%d triggers, want 3", got)
	}

	// Every provider draws from the same bucket, refused or not.
	body := pushBody("refs/heads/main")
	if w := f.do(githubRequest("push", body, sign(githubSecret, body))); w.Code != http.StatusTooManyRequests {
		t.Errorf("github while limited: status = %d, want 429", w.Code)
	}
	wantCounts := map[string]float64{"generic/accepted": 3, "generic/rate_limited": 2, "github/rate_limited": 1}
	if diff := cmp.Diff(wantCounts, f.counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}

	// One second later the bucket holds one token again.
	f.clock.SetTime(f.clock.Now().Add(time.Second))
	if w := f.do(genericRequest(http.MethodPost, auth)); w.Code != http.StatusAccepted {
		t.Errorf("after refill: status = %d, want 202", w.Code)
	}
	if w := f.do(genericRequest(http.MethodPost, auth)); w.Code != http.StatusTooManyRequests {
		t.Errorf("after refill, second request: status = %d, want 429", w.Code)
	}
}

// Junk requests are refused before the rate limit: a flood of them does
// not make a genuine notification wait.
func TestUnauthenticatedRequestsSpendNoTokens(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Burst = 1 })
	body := pushBody("refs/heads/main")
	for range 20 {
		f.do(genericRequest(http.MethodPost, "Bearer wrong"))
		f.do(githubRequest("push", body, sign([]byte("forged"), body)))
		f.do(gitlabRequest("Push Hook", body, "wrong"))
	}
	if w := f.do(githubRequest("push", body, sign(githubSecret, body))); w.Code != http.StatusAccepted {
		t.Errorf("genuine push after the junk: status = %d, want 202", w.Code)
	}
	if got := f.triggered(); len(got) != 1 {
		t.Errorf("triggered %v, want one trigger", got)
	}
	wantCounts := map[string]float64{"generic/bad_signature": 20, "github/bad_signature": 20, "gitlab/bad_signature": 20, "github/accepted": 1}
	if diff := cmp.Diff(wantCounts, f.counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestOversizedBodyIsRefused(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxBodyBytes+1)
	cases := []struct {
		name          string
		req           func() *http.Request
		unknownLength bool
		wantCounts    map[string]float64
	}{{
		name:       "signed GitHub push with a declared length",
		req:        func() *http.Request { return githubRequest("push", big, sign(githubSecret, big)) },
		wantCounts: map[string]float64{"github/bad_request": 1},
	}, {
		name:          "signed GitHub push streamed without a length",
		req:           func() *http.Request { return githubRequest("push", big, sign(githubSecret, big)) },
		unknownLength: true,
		wantCounts:    map[string]float64{"github/bad_request": 1},
	}, {
		name:          "GitLab push streamed without a length",
		req:           func() *http.Request { return gitlabRequest("Push Hook", big, string(gitlabToken)) },
		unknownLength: true,
		wantCounts:    map[string]float64{"gitlab/bad_request": 1},
	}, {
		name: "generic trigger streamed without a length",
		req: func() *http.Request {
			req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(big))
			req.Header.Set("Authorization", "Bearer "+string(genericToken))
			return req
		},
		unknownLength: true,
		wantCounts:    map[string]float64{"generic/bad_request": 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			req := tc.req()
			if tc.unknownLength {
				req.ContentLength = -1
				req.Body = io.NopCloser(bytes.NewReader(big))
			}
			if w := f.do(req); w.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("status = %d, want 413", w.Code)
			}
			if got := f.triggered(); len(got) != 0 {
				t.Errorf("triggered %v", got)
			}
			if diff := cmp.Diff(tc.wantCounts, f.counts()); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBodyOfExactlyTheLimitIsRead(t *testing.T) {
	f := newFixture(t)
	pad := MaxBodyBytes - len(`{"ref":"refs/heads/main","pad":""}`)
	body := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","pad":"%s"}`, strings.Repeat("x", pad)))
	if len(body) != MaxBodyBytes {
		t.Fatalf("body is %d bytes", len(body))
	}
	if w := f.do(githubRequest("push", body, sign(githubSecret, body))); w.Code != http.StatusAccepted {
		t.Errorf("status = %d, want 202", w.Code)
	}
}

// TestOverHTTP runs the handler behind a real server and client, the way a
// Git host reaches it.
func TestOverHTTP(t *testing.T) {
	f := newFixture(t)
	mux := http.NewServeMux()
	mux.Handle(Path, f.handler)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := pushBody("refs/heads/main")
	for _, sig := range []string{sign([]byte("forged"), body), sign(githubSecret, body)} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+Path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-Hub-Signature-256", sig)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if diff := cmp.Diff([]string{"github push to refs/heads/main"}, f.triggered()); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	wantCounts := map[string]float64{"github/accepted": 1, "github/bad_signature": 1}
	if diff := cmp.Diff(wantCounts, f.counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestNilRecorderAndDefaults(t *testing.T) {
	var got []string
	h := NewHandler(Options{GenericToken: genericToken}, func(r string) { got = append(got, r) }, nil)
	for range DefaultBurst {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, genericRequest(http.MethodPost, "Bearer "+string(genericToken)))
		if w.Code != http.StatusAccepted {
			t.Fatalf("status = %d, want 202", w.Code)
		}
	}
	if len(got) != DefaultBurst {
		t.Errorf("%d triggers, want %d", len(got), DefaultBurst)
	}
}

func TestNilTriggerPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewHandler accepted a nil trigger")
		}
	}()
	NewHandler(DefaultOptions(), nil, nil)
}

package webhook

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitHub(t *testing.T) {
	body := pushBody("refs/heads/main")
	cases := []struct {
		name        string
		req         func() *http.Request
		wantCode    int
		wantTrigger []string
		wantCounts  map[string]float64
	}{{
		name:        "valid signature on a push to the branch triggers",
		req:         func() *http.Request { return githubRequest("push", body, sign(githubSecret, body)) },
		wantCode:    http.StatusAccepted,
		wantTrigger: []string{"github push to refs/heads/main"},
		wantCounts:  map[string]float64{"github/accepted": 1},
	}, {
		name:       "forged signature is refused",
		req:        func() *http.Request { return githubRequest("push", body, sign([]byte("guess"), body)) },
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"github/bad_signature": 1},
	}, {
		name: "signature of another body is refused",
		req: func() *http.Request {
			return githubRequest("push", pushBody("refs/heads/evil"), sign(githubSecret, body))
		},
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"github/bad_signature": 1},
	}, {
		name:       "missing signature is refused",
		req:        func() *http.Request { return githubRequest("push", body, "") },
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"github/bad_signature": 1},
	}, {
		name: "sha1 signature is refused",
		req: func() *http.Request {
			return githubRequest("push", body, "sha1="+sign(githubSecret, body)[len("sha256="):])
		},
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"github/bad_signature": 1},
	}, {
		name:       "signature that is not hex is refused",
		req:        func() *http.Request { return githubRequest("push", body, "sha256=zz") },
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"github/bad_signature": 1},
	}, {
		name: "push to another branch is ignored",
		req: func() *http.Request {
			b := pushBody("refs/heads/feature")
			return githubRequest("push", b, sign(githubSecret, b))
		},
		wantCode:   http.StatusAccepted,
		wantCounts: map[string]float64{"github/ignored": 1},
	}, {
		name: "tag push named like the branch is ignored",
		req: func() *http.Request {
			b := pushBody("refs/tags/main")
			return githubRequest("push", b, sign(githubSecret, b))
		},
		wantCode:   http.StatusAccepted,
		wantCounts: map[string]float64{"github/ignored": 1},
	}, {
		name: "ping is answered 200 and ignored",
		req: func() *http.Request {
			b := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
			return githubRequest("ping", b, sign(githubSecret, b))
		},
		wantCode:   http.StatusOK,
		wantCounts: map[string]float64{"github/ignored": 1},
	}, {
		name: "other event is ignored",
		req: func() *http.Request {
			b := []byte(`{"action":"opened"}`)
			return githubRequest("pull_request", b, sign(githubSecret, b))
		},
		wantCode:   http.StatusAccepted,
		wantCounts: map[string]float64{"github/ignored": 1},
	}, {
		name: "signed push without a ref is a bad request",
		req: func() *http.Request {
			b := []byte(`{"ref":`)
			return githubRequest("push", b, sign(githubSecret, b))
		},
		wantCode:   http.StatusBadRequest,
		wantCounts: map[string]float64{"github/bad_request": 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			w := f.do(tc.req())
			if w.Code != tc.wantCode {
				t.Errorf("status = %d (%q), want %d", w.Code, w.Body.String(), tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantTrigger, f.triggered()); diff != "" {
				t.Errorf("triggers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCounts, f.counts()); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGitHubWithoutSecretIsDisabled(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.GitHubSecret = nil })
	body := pushBody("refs/heads/main")
	// Signed with the empty key: must not pass either.
	for _, sig := range []string{sign(nil, body), sign(githubSecret, body)} {
		if w := f.do(githubRequest("push", body, sig)); w.Code != http.StatusUnauthorized {
			t.Errorf("status = %d, want 401", w.Code)
		}
	}
	if got := f.triggered(); len(got) != 0 {
		t.Errorf("triggered %v", got)
	}
	if diff := cmp.Diff(map[string]float64{"github/bad_signature": 2}, f.counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestEmptyBranchAcceptsAnyPush(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Branch = "" })
	body := pushBody("refs/heads/feature")
	if w := f.do(githubRequest("push", body, sign(githubSecret, body))); w.Code != http.StatusAccepted {
		t.Errorf("status = %d, want 202", w.Code)
	}
	if diff := cmp.Diff([]string{"github push to refs/heads/feature"}, f.triggered()); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
}

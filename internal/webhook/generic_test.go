package webhook

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGeneric(t *testing.T) {
	cases := []struct {
		name        string
		req         *http.Request
		wantCode    int
		wantTrigger []string
		wantCounts  map[string]float64
	}{{
		name:        "bearer token triggers",
		req:         genericRequest(http.MethodPost, "Bearer "+string(genericToken)),
		wantCode:    http.StatusAccepted,
		wantTrigger: []string{"generic webhook trigger"},
		wantCounts:  map[string]float64{"generic/accepted": 1},
	}, {
		name:        "scheme is case-insensitive",
		req:         genericRequest(http.MethodPost, "bearer "+string(genericToken)),
		wantCode:    http.StatusAccepted,
		wantTrigger: []string{"generic webhook trigger"},
		wantCounts:  map[string]float64{"generic/accepted": 1},
	}, {
		name:       "wrong token is refused",
		req:        genericRequest(http.MethodPost, "Bearer generic-tokem"),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"generic/bad_signature": 1},
	}, {
		name:       "basic scheme is refused",
		req:        genericRequest(http.MethodPost, "Basic "+string(genericToken)),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"generic/bad_signature": 1},
	}, {
		name:       "no authorization is refused",
		req:        genericRequest(http.MethodPost, ""),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"generic/bad_signature": 1},
	}, {
		name:       "GET is not allowed",
		req:        genericRequest(http.MethodGet, "Bearer "+string(genericToken)),
		wantCode:   http.StatusMethodNotAllowed,
		wantCounts: map[string]float64{"generic/bad_request": 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			w := f.do(tc.req)
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

func TestGenericWithoutTokenIsDisabled(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.GenericToken = nil })
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer " + string(genericToken)} {
		if w := f.do(genericRequest(http.MethodPost, auth)); w.Code != http.StatusUnauthorized {
			t.Errorf("authorization %q: status = %d, want 401", auth, w.Code)
		}
	}
	if got := f.triggered(); len(got) != 0 {
		t.Errorf("triggered %v", got)
	}
}

func TestMethodNotAllowedNamesPOST(t *testing.T) {
	f := newFixture(t)
	body := pushBody("refs/heads/main")
	req := githubRequest("push", body, sign(githubSecret, body))
	req.Method = http.MethodPut
	w := f.do(req)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
		t.Errorf("status = %d, Allow = %q; want 405 and POST", w.Code, w.Header().Get("Allow"))
	}
	if got := f.triggered(); len(got) != 0 {
		t.Errorf("triggered %v", got)
	}
}

package webhook

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitLab(t *testing.T) {
	cases := []struct {
		name        string
		req         *http.Request
		wantCode    int
		wantTrigger []string
		wantCounts  map[string]float64
	}{{
		name:        "right token on a push to the branch triggers",
		req:         gitlabRequest("Push Hook", pushBody("refs/heads/main"), string(gitlabToken)),
		wantCode:    http.StatusAccepted,
		wantTrigger: []string{"gitlab push to refs/heads/main"},
		wantCounts:  map[string]float64{"gitlab/accepted": 1},
	}, {
		name:       "wrong token is refused",
		req:        gitlabRequest("Push Hook", pushBody("refs/heads/main"), "gl-tokem"),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"gitlab/bad_signature": 1},
	}, {
		name:       "token prefix is refused",
		req:        gitlabRequest("Push Hook", pushBody("refs/heads/main"), "gl-"),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"gitlab/bad_signature": 1},
	}, {
		name:       "missing token is refused",
		req:        gitlabRequest("Push Hook", pushBody("refs/heads/main"), ""),
		wantCode:   http.StatusUnauthorized,
		wantCounts: map[string]float64{"gitlab/bad_signature": 1},
	}, {
		name:       "push to another branch is ignored",
		req:        gitlabRequest("Push Hook", pushBody("refs/heads/feature"), string(gitlabToken)),
		wantCode:   http.StatusAccepted,
		wantCounts: map[string]float64{"gitlab/ignored": 1},
	}, {
		name:       "tag push is ignored",
		req:        gitlabRequest("Tag Push Hook", pushBody("refs/tags/v1"), string(gitlabToken)),
		wantCode:   http.StatusAccepted,
		wantCounts: map[string]float64{"gitlab/ignored": 1},
	}, {
		name:       "push without a ref is a bad request",
		req:        gitlabRequest("Push Hook", []byte(`{}`), string(gitlabToken)),
		wantCode:   http.StatusBadRequest,
		wantCounts: map[string]float64{"gitlab/bad_request": 1},
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

func TestGitLabWithoutTokenIsDisabled(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.GitLabToken = nil })
	for _, token := range []string{"", string(gitlabToken)} {
		if w := f.do(gitlabRequest("Push Hook", pushBody("refs/heads/main"), token)); w.Code != http.StatusUnauthorized {
			t.Errorf("token %q: status = %d, want 401", token, w.Code)
		}
	}
	if got := f.triggered(); len(got) != 0 {
		t.Errorf("triggered %v", got)
	}
}

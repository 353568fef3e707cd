package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/propagit/propagit/internal/metrics"
)

var (
	githubSecret = []byte("gh-secret")
	gitlabToken  = []byte("gl-token")
	genericToken = []byte("generic-token")
)

// fixture is a handler with every provider enabled, a fake clock (so the
// bucket never refills unless the test steps it), and a registry.
type fixture struct {
	t       *testing.T
	handler http.Handler
	reg     *prometheus.Registry
	clock   *clocktesting.FakePassiveClock

	mu       sync.Mutex
	triggers []string
}

func newFixture(t *testing.T, modify ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, reg: prometheus.NewPedanticRegistry(), clock: clocktesting.NewFakePassiveClock(time.Unix(1_700_000_000, 0))}
	opts := Options{
		GitHubSecret: githubSecret, GitLabToken: gitlabToken, GenericToken: genericToken,
		Branch: "main", RatePerSecond: 1, Burst: 100, Clock: f.clock,
	}
	for _, m := range modify {
		m(&opts)
	}
	rec := metrics.NewRecorder()
	rec.MustRegister(f.reg)
	f.handler = NewHandler(opts, f.trigger, rec)
	return f
}

func (f *fixture) trigger(reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.triggers = append(f.triggers, reason)
}

func (f *fixture) triggered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.triggers...)
}

// do serves req and returns the response.
func (f *fixture) do(req *http.Request) *httptest.ResponseRecorder {
	f.t.Helper()
	w := httptest.NewRecorder()
	f.handler.ServeHTTP(w, req)
	return w
}

// counts returns propagit_webhook_requests_total as "provider/result" → n.
func (f *fixture) counts() map[string]float64 {
	f.t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		f.t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "propagit_webhook_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			got[labels["provider"]+"/"+labels["result"]] = m.GetCounter().GetValue()
		}
	}
	return got
}

func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func pushBody(ref string) []byte {
	return []byte(`{"ref":"` + ref + `","after":"0123456789abcdef0123456789abcdef01234567","repository":{"full_name":"org/fleet"}}`)
}

func githubRequest(event string, body []byte, signature string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	return req
}

func gitlabRequest(event string, body []byte, token string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", event)
	if token != "" {
		req.Header.Set("X-Gitlab-Token", token)
	}
	return req
}

func genericRequest(method, authorization string) *http.Request {
	req := httptest.NewRequest(method, Path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
}

package controller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/promgate"
)

// A Prometheus that never answers delays a pass by one budget, however
// many clusters the wave has, and every one of them counts as not healthy;
// one that answers an empty vector lets them all through.
func TestRolloutGatesBoundedAndFailClosed(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer slow.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	defer ok.Close()
	defer func(b time.Duration) { gateBudget = b }(gateBudget)
	gateBudget = 300 * time.Millisecond

	wave := &rolloutv1alpha1.Wave{Name: "canary", Gate: &rolloutv1alpha1.Gate{Prometheus: &rolloutv1alpha1.PrometheusGate{Query: `up{cluster="{{cluster}}"} == 0`}}}
	checks := func() []gateCheck {
		var out []gateCheck
		for i := range 40 {
			out = append(out, gateCheck{cluster: fmt.Sprintf("m%d", i), wave: wave})
		}
		return out
	}
	opts := DefaultOptions()
	opts.RolloutGate = &promgate.Client{URL: slow.URL}
	c := New(opts, nil, nil, nil, nil, logr.Discard())
	start := time.Now()
	failed := c.runGates(context.Background(), "p", checks())
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("40 gates on a silent Prometheus took %s, want one budget (300ms)", d)
	}
	if len(failed) != 40 {
		t.Errorf("%d of 40 gates did not hold on a silent Prometheus, want all", len(failed))
	}

	c.opts.RolloutGate = &promgate.Client{URL: ok.URL}
	if failed := c.runGates(context.Background(), "p", checks()); len(failed) != 0 {
		t.Errorf("%d gates did not hold on empty answers: %v", len(failed), failed[0].why)
	}
	c.opts.RolloutGate = nil
	if failed := c.runGates(context.Background(), "p", checks()); len(failed) != 40 || failed[0].why == "" {
		t.Errorf("without a Prometheus: %d gates did not hold, want 40 with a reason", len(failed))
	}
}

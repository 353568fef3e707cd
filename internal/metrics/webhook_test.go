package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestWebhookRequestsAreCountedByProviderAndResult(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.WebhookRequest(ProviderGitHub, WebhookAccepted)
	r.WebhookRequest(ProviderGitHub, WebhookBadSignature)
	r.WebhookRequest(ProviderGitHub, WebhookBadSignature)
	r.WebhookRequest(ProviderGitLab, WebhookIgnored)
	r.WebhookRequest(ProviderGeneric, WebhookRateLimited)
	r.WebhookRequest(ProviderGeneric, WebhookBadRequest)
	r.WebhookRequest("bitbucket", "weird")
	want := `
# HELP propagit_webhook_requests_total Requests to the Git webhook by provider and result.
# TYPE propagit_webhook_requests_total counter
propagit_webhook_requests_total{provider="generic",result="bad_request"} 1
propagit_webhook_requests_total{provider="generic",result="rate_limited"} 1
propagit_webhook_requests_total{provider="github",result="accepted"} 1
propagit_webhook_requests_total{provider="github",result="bad_signature"} 2
propagit_webhook_requests_total{provider="gitlab",result="ignored"} 1
propagit_webhook_requests_total{provider="other",result="other"} 1
`
	if err := testutil.CollectAndCompare(r.webhook, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

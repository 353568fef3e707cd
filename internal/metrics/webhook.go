package metrics

// Webhook providers.
const (
	ProviderGitHub  = "github"
	ProviderGitLab  = "gitlab"
	ProviderGeneric = "generic"
)

// Webhook results.
const (
	WebhookAccepted     = "accepted"
	WebhookBadSignature = "bad_signature"
	WebhookRateLimited  = "rate_limited"
	WebhookIgnored      = "ignored"
	WebhookBadRequest   = "bad_request"
)

// WebhookRequest counts one request to the Git webhook: provider github,
// gitlab or generic; result accepted, bad_signature, rate_limited, ignored
// or bad_request.
func (r *Recorder) WebhookRequest(provider, result string) {
	if r == nil {
		return
	}
	provider = oneOf(provider, ProviderGitHub, ProviderGitLab, ProviderGeneric)
	result = oneOf(result, WebhookAccepted, WebhookBadSignature, WebhookRateLimited, WebhookIgnored, WebhookBadRequest)
	r.webhook.WithLabelValues(provider, result).Inc()
}

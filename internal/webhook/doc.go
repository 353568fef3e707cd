// Package webhook serves /hooks/git: Git push notifications that start a
// fetch at once instead of waiting for the next poll. Polling stays the
// fallback, so a lost, refused or rate-limited notification only delays a
// sync until the next interval.
//
// Three providers, told apart by their headers:
//
//	GitHub   X-GitHub-Event set; X-Hub-Signature-256 is "sha256=" and the hex
//	         HMAC-SHA256 of the raw body keyed with the secret.
//	GitLab   X-Gitlab-Event or X-Gitlab-Token set; X-Gitlab-Token equals the
//	         token.
//	generic  anything else; "Authorization: Bearer <token>".
//
// Secrets are compared in constant time. A provider whose secret is empty is
// disabled: its requests are refused with 401, exactly like a wrong secret,
// so the endpoint does not reveal which providers are enabled.
//
// Order of checks, each with its status and the result counted in
// propagit_webhook_requests_total:
//
//	method is not POST ─────────────────────────────── 405 bad_request
//	body over 1 MiB ─────────────────────────────────── 413 bad_request
//	GitLab or generic token wrong (body unread) ────── 401 bad_signature
//	body not received within BodyTimeout ───────────── 408 bad_request
//	GitHub signature wrong, or provider disabled ───── 401 bad_signature
//	MaxInFlight authenticated requests being served ─ 503 rate_limited
//	rate limit (one token bucket for the endpoint) ── 429 rate_limited
//	GitHub ping ─────────────────────────────────────── 200 ignored
//	other event, or push to another branch ─────────── 202 ignored
//	push payload without a readable ref ─────────────── 400 bad_request
//	push to the followed branch, or generic trigger ── 202 accepted
//
// The trigger is called only for accepted requests. It must not block (the
// controller's Trigger coalesces requests into one pending fetch).
//
// Authentication runs before the limiter, so that requests without the
// secret never spend the tokens of genuine notifications, and before the
// in-flight limit, so that requests without it never take a slot: a body
// is streamed through the HMAC and a scanner that keeps only the payload's
// ref, never held whole. What bounds the cost of a flood is the body
// deadline and size cap and the server's timeouts (Server): a refused
// request costs its connection for BodyTimeout at most and one HMAC over
// at most 1 MiB.
package webhook

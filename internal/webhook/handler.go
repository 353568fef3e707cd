package webhook

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/time/rate"

	"github.com/propagit/propagit/internal/metrics"
)

// handler serves Path; see the package documentation for the protocol.
type handler struct {
	opts    Options
	trigger func(reason string)
	rec     *metrics.Recorder
	limiter *rate.Limiter
	// slots bounds the authenticated requests in flight: one token each.
	slots chan struct{}
}

// verdict is the outcome of one request.
type verdict struct {
	code   int
	result string // one of the metrics.Webhook* results
	msg    string // response body
	reason string // passed to the trigger when result is accepted
}

// NewHandler returns the handler of Path. trigger is called, with a short
// human-readable reason, for every accepted notification; it must not block
// and must not be nil. rec may be nil.
func NewHandler(opts Options, trigger func(reason string), rec *metrics.Recorder) http.Handler {
	if trigger == nil {
		panic("webhook: nil trigger")
	}
	opts = opts.withDefaults()
	return &handler{
		opts:    opts,
		trigger: trigger,
		rec:     rec,
		limiter: rate.NewLimiter(rate.Limit(opts.RatePerSecond), opts.Burst),
		slots:   make(chan struct{}, opts.MaxInFlight),
	}
}

// ServeHTTP decides, triggers only when accepted, answers and counts.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	provider := providerOf(r.Header)
	v := h.decide(w, r, provider)
	if v.result == metrics.WebhookAccepted {
		h.trigger(v.reason)
	}
	if v.code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(v.code)
	_, _ = io.WriteString(w, v.msg+"\n")
	h.rec.WebhookRequest(provider, v.result)
}

// decide runs the checks shared by every provider, then the provider's.
// The body is read, streamed and never kept, before any slot is taken: a
// request that has not proved its secret holds nothing but its own
// connection, for BodyTimeout at most. Authentication comes before the
// rate limit too, so unauthenticated requests never spend the tokens of
// genuine notifications.
func (h *handler) decide(w http.ResponseWriter, r *http.Request, provider string) verdict {
	if r.Method != http.MethodPost {
		return badRequest(http.StatusMethodNotAllowed, "method not allowed: use POST")
	}
	if r.ContentLength > MaxBodyBytes {
		return tooLarge
	}
	// The ResponseWriter of a test recorder cannot set deadlines; a server's can.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	var ref string
	var v *verdict
	switch provider {
	case metrics.ProviderGitHub:
		ref, v = h.githubAuth(w, r)
	case metrics.ProviderGitLab:
		ref, v = h.gitlabAuth(w, r)
	default:
		v = h.genericAuth(w, r)
	}
	if v != nil {
		return *v
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		return busy
	}
	if !h.limiter.AllowN(h.opts.Clock.Now(), 1) {
		return verdict{code: http.StatusTooManyRequests, result: metrics.WebhookRateLimited, msg: "too many requests"}
	}
	switch provider {
	case metrics.ProviderGitHub:
		return h.github(r, ref)
	case metrics.ProviderGitLab:
		return h.gitlab(r, ref)
	default:
		return accepted("generic webhook trigger")
	}
}

// providerOf tells the provider from the request headers.
func providerOf(hdr http.Header) string {
	switch {
	case hdr.Get(headerGitHubEvent) != "":
		return metrics.ProviderGitHub
	case hdr.Get(headerGitLabEvent) != "" || hdr.Get(headerGitLabToken) != "":
		return metrics.ProviderGitLab
	default:
		return metrics.ProviderGeneric
	}
}

var (
	unauthorized = verdict{code: http.StatusUnauthorized, result: metrics.WebhookBadSignature, msg: "unauthorized"}
	tooLarge     = badRequest(http.StatusRequestEntityTooLarge, "request body over 1 MiB")
	tooSlow      = badRequest(http.StatusRequestTimeout, "request body not received in time")
	// busy answers at once when MaxInFlight authenticated requests are
	// being served; it is counted with the rate-limited ones.
	busy = verdict{code: http.StatusServiceUnavailable, result: metrics.WebhookRateLimited, msg: "too many requests in flight"}
)

func badRequest(code int, msg string) verdict {
	return verdict{code: code, result: metrics.WebhookBadRequest, msg: msg}
}

func ignored(code int, msg string) verdict {
	return verdict{code: code, result: metrics.WebhookIgnored, msg: "ignored: " + msg}
}

func accepted(reason string) verdict {
	return verdict{code: http.StatusAccepted, result: metrics.WebhookAccepted, msg: "accepted", reason: reason}
}

// readBody streams at most MaxBodyBytes of the body into dst; a failure
// is returned as a verdict.
func readBody(w http.ResponseWriter, r *http.Request, dst io.Writer) *verdict {
	_, err := io.Copy(dst, http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &tooLarge
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &tooSlow
		}
		v := badRequest(http.StatusBadRequest, "failed to read request body")
		return &v
	}
	return nil
}

// tokenEqual compares a configured secret with a presented one in constant
// time; an empty secret never matches.
func tokenEqual(want []byte, got string) bool {
	return len(want) > 0 && subtle.ConstantTimeCompare(want, []byte(got)) == 1
}

// wantsRef reports whether a push to ref concerns the followed branch.
func (h *handler) wantsRef(ref string) bool {
	return h.opts.Branch == "" || ref == "refs/heads/"+h.opts.Branch
}

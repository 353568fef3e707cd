package webhook

import (
	"net/http"
	"time"

	"k8s.io/utils/clock"
)

// Path is where the handler is meant to be mounted.
const Path = "/hooks/git"

// MaxBodyBytes bounds a request body; larger bodies are refused with 413.
const MaxBodyBytes = 1 << 20

// Defaults used for zero Options fields.
const (
	DefaultRatePerSecond = 1.0
	DefaultBurst         = 10
	DefaultMaxInFlight   = 16
	DefaultBodyTimeout   = 10 * time.Second
)

// Options configure the handler. Secrets come from Secrets or files, never
// from flags or Git.
type Options struct {
	// GitHubSecret is the secret of the GitHub webhook; empty disables GitHub.
	GitHubSecret []byte
	// GitLabToken is the secret token of the GitLab webhook; empty disables
	// GitLab.
	GitLabToken []byte
	// GenericToken is the bearer token of the generic trigger; empty
	// disables it.
	GenericToken []byte
	// Branch is the branch the controller follows: a push to another ref is
	// ignored. Empty accepts a push to any ref.
	Branch string
	// RatePerSecond and Burst size the token bucket shared by every request;
	// zero means DefaultRatePerSecond and DefaultBurst.
	RatePerSecond float64
	Burst         int
	// MaxInFlight bounds the authenticated requests being served (a request
	// takes its slot once its secret is checked); more are answered 503
	// at once. Zero means DefaultMaxInFlight.
	MaxInFlight int
	// BodyTimeout bounds the time to receive a request's body, from the
	// moment its headers are read; zero means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Clock feeds the rate limiter; nil means the real clock.
	Clock clock.PassiveClock
}

// DefaultOptions returns Options with no provider enabled.
func DefaultOptions() Options {
	return Options{RatePerSecond: DefaultRatePerSecond, Burst: DefaultBurst, MaxInFlight: DefaultMaxInFlight,
		BodyTimeout: DefaultBodyTimeout, Clock: clock.RealClock{}}
}

func (o Options) withDefaults() Options {
	if o.RatePerSecond <= 0 {
		o.RatePerSecond = DefaultRatePerSecond
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Server returns an HTTP server for addr with the timeouts a public
// endpoint needs: headers in 5 s, a whole request in 30 s, idle keep-alive
// connections closed after a minute.
func Server(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
}

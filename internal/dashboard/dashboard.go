// Package dashboard serves a read-only web view of the fleet from what
// propagit records: the Works and their per-cluster status, read through the
// same stores `propagit status` reads, and optionally the Git history and
// trees of the source (for commit times, member labels and explain traces).
// It never talks to members and changes nothing.
//
// Pages are html/template with embedded CSS and one small script that polls
// the page it is on with its ETag and swaps the live part in place, so the
// dashboard needs no front-end build and runs under a strict
// Content-Security-Policy (no inline script or style).
package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/status"
)

//go:embed web
var webFS embed.FS

// CSP is the Content-Security-Policy of every response: scripts and styles
// come from the dashboard's own embedded files only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// WorkReader knows how to list the recorded Works and the newest recorded
// revision (works.Store satisfies it).
type WorkReader interface {
	List(ctx context.Context) ([]*workv1alpha1.Work, error)
	NewestRevision(ctx context.Context) (string, error)
}

// StatusReader knows how to read one cluster's recorded status
// (works.StatusStore satisfies it).
type StatusReader interface {
	GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error)
}

// Source knows how to read the fleet's Git history and the fleet folder
// at one revision.
type Source interface {
	// Commits fetches and returns up to n newest commits, newest first.
	Commits(ctx context.Context, n int) ([]source.Commit, error)
	// Tree returns the fleet folder at revision, rooted at "/".
	Tree(ctx context.Context, revision string) (filesys.FileSystem, error)
}

// Options configure a Server.
type Options struct {
	Works  WorkReader
	Status StatusReader
	// Source, when set, adds commit times, member labels and regions, and
	// explain traces; without it those parts say they are unavailable.
	Source Source
	// RepoURL is the source repository, for links to the Git host's commit
	// pages (credentials are never shown).
	RepoURL string
	// Token, when set, is the bearer token every request must carry.
	Token string
	// UserHeader, when set, is a header an authenticating proxy sets
	// (X-Forwarded-User, X-Auth-Request-Email ...); requests without it
	// are refused.
	UserHeader string
	// Refresh is how often Run reads the records.
	Refresh time.Duration
	// PageSize is the rows of one table page.
	PageSize int
	// Commits is how many newest commits the revisions page shows.
	Commits int
	// Render and Limits are used to compute explain traces.
	Render render.Options
	Limits load.Options
	Log    logr.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// DefaultOptions returns the options of `propagit dashboard`.
func DefaultOptions() Options {
	return Options{Refresh: 2 * time.Second, PageSize: 100, Commits: 30, Render: render.DefaultOptions(),
		Limits: load.DefaultOptions(), Log: logr.Discard()}
}

// Server serves the dashboard from the last snapshot of the records.
type Server struct {
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux

	mu   sync.RWMutex
	snap *Snapshot
	// seen is when each event key or (revision, cluster) application was
	// first observed: the time of records that carry none.
	seen map[string]time.Time
	// log is every event seen since the start, by key, at most maxEvents:
	// a record that goes (an evicted copy removed, a member Ready again)
	// keeps its place in the story.
	log      map[string]Event
	rendered *renderCache
	decoded  decodeCache
}

// New builds a server; nothing is read until Refresh or Run.
func New(opts Options) (*Server, error) {
	if opts.Works == nil || opts.Status == nil {
		return nil, errors.New("dashboard: Works and Status are required")
	}
	def := DefaultOptions()
	if opts.Refresh <= 0 {
		opts.Refresh = def.Refresh
	}
	if opts.PageSize <= 0 {
		opts.PageSize = def.PageSize
	}
	if opts.Commits <= 0 {
		opts.Commits = def.Commits
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	s := &Server{opts: opts, seen: map[string]time.Time{}, log: map[string]Event{}, rendered: newRenderCache(4), snap: &Snapshot{Report: &status.Report{}, index: &lazyIndex{}}}
	if err := s.parsePages(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

func (s *Server) parsePages() error {
	s.pages = map[string]*template.Template{}
	for _, page := range []string{"fleet", "revisions", "revision", "templates", "template", "events"} {
		t, err := template.New(page).Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/"+page+".html")
		if err != nil {
			return fmt.Errorf("failed to parse the %s page: %w", page, err)
		}
		s.pages[page] = t
	}
	return nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(webFS, "web/static")
	s.mux = http.NewServeMux()
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	s.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // files only, no listings
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	s.mux.HandleFunc("GET /{$}", s.fleet)
	s.mux.HandleFunc("GET /revisions", s.revisions)
	s.mux.HandleFunc("GET /revision", s.revision)
	s.mux.HandleFunc("GET /templates", s.templates)
	s.mux.HandleFunc("GET /template", s.templateDetail)
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("GET /api/report.json", s.reportJSON)
}

// ServeHTTP checks the Host (without a token) and the credentials, sets the security headers on every
// response and serves the pages.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only", http.StatusMethodNotAllowed)
		return
	}
	if !s.hostAllowed(r) {
		http.Error(w, "this dashboard has no token and answers only to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
		return
	}
	if !s.authorized(r) {
		if s.opts.Token != "" {
			h.Set("WWW-Authenticate", `Bearer realm="propagit"`)
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.UserHeader != "" && strings.TrimSpace(r.Header.Get(s.opts.UserHeader)) == "" {
		return false
	}
	if s.opts.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// Run refreshes the snapshot every Refresh until ctx ends; a failed read
// keeps the last snapshot and shows the error on every page. Failures in
// a row back off (see retryAfter), and the same error is logged once.
func (s *Server) Run(ctx context.Context) error {
	failures, lastErr := 0, ""
	for {
		err := s.Refresh(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			failures, lastErr = 0, ""
		default:
			failures++
			if err.Error() != lastErr {
				s.opts.Log.Error(err, "failed to read the records; retrying", "retryIn", retryAfter(failures, s.opts.Refresh).String())
				lastErr = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retryAfter(failures, s.opts.Refresh)):
		}
	}
}

// maxRetry bounds the wait between reads of records that cannot be read.
const maxRetry = time.Minute

// retryAfter is how long to wait after the given number of failed reads
// in a row: refresh, doubled for each failure, at most maxRetry (or
// refresh, when that is longer). A store that does not exist is not
// asked every two seconds forever.
func retryAfter(failures int, refresh time.Duration) time.Duration {
	d := refresh
	for i := 0; i < failures && d < maxRetry; i++ {
		d *= 2
	}
	return max(min(d, maxRetry), refresh)
}

// Package gitserver serves bare Git repositories over real smart HTTP for
// tests: Git's own `git http-backend` behind net/http/cgi on a loopback
// httptest.Server, with pushes enabled and optional basic auth. It needs
// the git binary; nothing else (no network, no daemon).
//
// It counts requests by service, so a test can assert how often a client
// fetched or pushed.
package gitserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-git/v5"
)

// Options configure a Server.
type Options struct {
	// Username and Password, when Username is set, are required as HTTP
	// basic auth on every request, and reach every repository.
	Username string
	Password string
	// Users are further basic-auth accounts, each reaching only its own
	// repositories, as a deploy key or a fine-grained token of a Git host
	// does: another repository answers 403 Forbidden. With Users and no
	// Username, every request must still authenticate.
	Users []User
	// Stderr receives git http-backend's error output; nil discards it.
	Stderr io.Writer
}

// User is a basic-auth account limited to some repositories.
type User struct {
	Username string
	Password string
	// Repos are the repository names (as InitBare takes them) it reaches.
	Repos []string
}

// Server serves every bare repository under Root at URL/<name>.
type Server struct {
	// Root is the folder holding the repositories.
	Root string
	// URL is the base URL, without credentials.
	URL string

	opts    Options
	srv     *httptest.Server
	pushes  atomic.Int64
	fetches atomic.Int64
	refs    atomic.Int64
	sent    atomic.Int64
}

// New starts a server for the repositories under root. Close stops it.
func New(root string, opts Options) (*Server, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("failed to find the git binary: %w", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	backend := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + abs,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*",
		},
		Stderr: stderr,
	}
	s := &Server{Root: abs, opts: opts}
	s.srv = httptest.NewServer(s.handler(backend))
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server and waits for its requests to end.
func (s *Server) Close() { s.srv.Close() }

// InitBare creates an empty bare repository name (for example "fleet.git")
// under Root and returns its URL.
func (s *Server) InitBare(name string) (string, error) {
	if name == "" || strings.Contains(name, "..") {
		return "", fmt.Errorf("invalid repository name %q", name)
	}
	if _, err := git.PlainInit(filepath.Join(s.Root, name), true); err != nil {
		return "", fmt.Errorf("failed to create repository %s: %w", name, err)
	}
	return s.RepoURL(name), nil
}

// RepoURL returns the URL of repository name, without credentials.
func (s *Server) RepoURL(name string) string { return s.URL + "/" + name }

// Pushes returns how many pushes (receive-pack POSTs) were served.
func (s *Server) Pushes() int64 { return s.pushes.Load() }

// Fetches returns how many fetches (upload-pack POSTs) were served.
func (s *Server) Fetches() int64 { return s.fetches.Load() }

// BytesSent returns how many response body bytes the server wrote: what
// clients downloaded.
func (s *Server) BytesSent() int64 { return s.sent.Load() }

// RefAdvertisements returns how many ref listings (info/refs GETs) were
// served; every fetch and push starts with one, and an up-to-date fetch is
// only that.
func (s *Server) RefAdvertisements() int64 { return s.refs.Load() }

func (s *Server) handler(backend http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := s.authorize(r); code != http.StatusOK {
			if code == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="gitserver"`)
			}
			http.Error(w, http.StatusText(code), code)
			return
		}
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack"):
			s.pushes.Add(1)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			s.fetches.Add(1)
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			s.refs.Add(1)
		}
		if err := unchunk(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		backend.ServeHTTP(&countingWriter{ResponseWriter: w, n: &s.sent}, r)
	})
}

// authorize returns 200 when r may proceed, 401 without valid credentials,
// 403 when its user may not reach the repository r names.
func (s *Server) authorize(r *http.Request) int {
	if s.opts.Username == "" && len(s.opts.Users) == 0 {
		return http.StatusOK
	}
	u, p, ok := r.BasicAuth()
	if !ok {
		return http.StatusUnauthorized
	}
	if s.opts.Username != "" && u == s.opts.Username && p == s.opts.Password {
		return http.StatusOK
	}
	for _, user := range s.opts.Users {
		if u != user.Username || p != user.Password {
			continue
		}
		if path.Clean(r.URL.Path) != r.URL.Path {
			return http.StatusForbidden // no "..": the path checked is the path served
		}
		for _, repo := range user.Repos {
			if strings.HasPrefix(r.URL.Path, "/"+repo+"/") {
				return http.StatusOK
			}
		}
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// countingWriter counts the body bytes of a response.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// unchunk buffers a chunked request body, which CGI cannot pass on.
func unchunk(r *http.Request) error {
	if r.ContentLength >= 0 || r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return errors.New("failed to read request body")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.TransferEncoding = nil
	return nil
}

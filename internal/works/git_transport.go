package works

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// fileScheme is the private URL scheme under which GitStore reaches local
// repositories (file:// URLs and paths) through fileTransport.
const fileScheme = "propagit-file"

var installOnce sync.Once

// installFileTransport registers fileTransport, go-git's in-process server
// made safe for concurrent writers, under fileScheme. go-git keeps one
// global transport per scheme; using a scheme of our own leaves "file" to
// whoever else registers it (internal/source does) and keeps these
// semantics whatever the order of registration.
func installFileTransport() {
	installOnce.Do(func() {
		client.InstallProtocol(fileScheme, &fileTransport{inner: server.NewServer(fileLoader{})})
	})
}

// transportURL returns the URL go-git is given for url: a file:// URL or a
// local path becomes a fileScheme URL of the absolute path; anything else
// is unchanged.
func transportURL(url string) string {
	ep, err := transport.NewEndpoint(url)
	if err != nil || ep.Protocol != "file" {
		return url
	}
	p := ep.Path
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return fileScheme + "://" + filepath.ToSlash(p)
}

// fileLoader opens the repository a file:// endpoint names: a bare
// repository, or the .git folder of a working copy.
type fileLoader struct{}

func (fileLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	fs := osfs.New(ep.Path, osfs.WithBoundOS())
	if fi, err := fs.Stat(".git"); err == nil && fi.IsDir() {
		dot, err := fs.Chroot(".git")
		if err != nil {
			return nil, err
		}
		return filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), nil
	}
	if _, err := fs.Stat("config"); err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), nil
}

// redactURL drops the userinfo, query and fragment of a URL; an scp-like
// address ("user@host:path") loses its user.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if at := strings.Index(raw, "@"); at >= 0 && !strings.Contains(raw, "://") {
			return raw[at+1:]
		}
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// sanitizedError hides a URL's credentials in an error's text and keeps the
// chain for errors.Is.
type sanitizedError struct {
	err  error
	text string
}

func (e *sanitizedError) Error() string { return e.text }
func (e *sanitizedError) Unwrap() error { return e.err }

// sanitize removes rawURL's credentials (userinfo, password, query) from
// err's text.
func sanitize(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	pairs := []string{rawURL, redactURL(rawURL)}
	if u, perr := url.Parse(rawURL); perr == nil {
		if u.User != nil {
			pairs = append(pairs, u.User.String()+"@", "", u.User.Username()+":***@", "")
			if pw, ok := u.User.Password(); ok && pw != "" {
				pairs = append(pairs, pw, "***")
			}
		}
		if u.RawQuery != "" {
			pairs = append(pairs, "?"+u.RawQuery, "")
		}
	}
	text := strings.NewReplacer(pairs...).Replace(err.Error())
	if text == err.Error() {
		return err
	}
	return &sanitizedError{err: err, text: text}
}

// isRejected reports whether a push failed because the remote ref moved
// since it was fetched — the client's fast-forward check, an unknown remote
// tip, or the server refusing the ref update — so refetching and
// rebuilding may succeed.
func isRejected(err error) bool {
	if errors.Is(err, git.ErrForceNeeded) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "command error on", "failed to update ref", "fetch first", "cannot lock ref"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// isShallowUnsupported reports whether a fetch failed because the server
// cannot serve a shallow fetch (go-git's in-process server).
func isShallowUnsupported(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "shallow not supported") || strings.Contains(msg, "unsupported capability: shallow")
}

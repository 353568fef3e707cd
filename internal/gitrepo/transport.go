package gitrepo

import (
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Scheme is the private URL scheme under which propagit reaches local
// repositories (file:// URLs and paths) through fileTransport. go-git keeps
// one global transport per scheme; using a scheme of our own leaves "file"
// to go-git (its default runs git-upload-pack) and keeps these semantics
// whatever else registers.
const Scheme = "propagit-file"

var installOnce sync.Once

// Install registers fileTransport, go-git's in-process server made safe
// for concurrent writers, under Scheme: a file:// URL then needs no git
// binary. Every package that dials a URL calls it first.
func Install() {
	installOnce.Do(func() {
		client.InstallProtocol(Scheme, &fileTransport{inner: server.NewServer(FileLoader{})})
	})
}

// TransportURL returns the URL go-git is given for url: a file:// URL or a
// local path becomes a Scheme URL of the absolute path; anything else is
// unchanged.
func TransportURL(url string) string {
	ep, err := transport.NewEndpoint(url)
	if err != nil || ep.Protocol != "file" {
		return url
	}
	p := ep.Path
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return Scheme + "://" + filepath.ToSlash(p)
}

// FileLoader opens the repository a file:// endpoint names: a bare
// repository, or the .git folder of a working copy (go-git's DefaultLoader
// takes the working copy's root for the Git folder).
type FileLoader struct{}

// Load implements go-git's server.Loader.
func (FileLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
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

// RedactURL drops the userinfo, query and fragment of a URL; an scp-like
// address ("user@host:path") loses its user. The result is safe to print.
func RedactURL(raw string) string {
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

// sanitizedError hides a URL's credentials in an error's text while keeping
// the error chain.
type sanitizedError struct {
	err  error
	text string
}

func (e *sanitizedError) Error() string { return e.text }
func (e *sanitizedError) Unwrap() error { return e.err }

// Sanitize returns err with the credentials of rawURL removed from its
// text: the URL itself, its userinfo (also in the "user:***@" form net/http
// prints), its password and its query. The error chain is kept.
func Sanitize(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	pairs := []string{rawURL, RedactURL(rawURL)}
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

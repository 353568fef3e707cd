package source

import (
	"net/url"
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

var installOnce sync.Once

// installFileTransport makes go-git serve file:// URLs in-process. go-git's
// default file transport runs git-upload-pack, which needs a git binary.
func installFileTransport() {
	installOnce.Do(func() { client.InstallProtocol("file", fileTransport) })
}

// fileTransport is the in-process transport used for file:// URLs.
var fileTransport = server.NewServer(FileLoader{})

// FileLoader opens the repository a file:// endpoint names: a bare
// repository, or the .git folder of a working copy (go-git's DefaultLoader
// takes the working copy's root for the Git folder). The work store serves
// its own file transport with it.
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

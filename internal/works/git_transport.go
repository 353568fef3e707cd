package works

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"

	"github.com/propagit/propagit/internal/source"
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
		client.InstallProtocol(fileScheme, &fileTransport{inner: server.NewServer(source.FileLoader{})})
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

// isRejected reports whether a push failed because the remote ref moved
// since it was fetched — the client's fast-forward check, a lease the
// remote ref no longer holds, an unknown remote tip, or the server refusing
// the ref update — so refetching and rebuilding may succeed.
func isRejected(err error) bool {
	if errors.Is(err, git.ErrForceNeeded) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "command error on", "failed to update ref", "fetch first", "cannot lock ref",
		"required to be"} {
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

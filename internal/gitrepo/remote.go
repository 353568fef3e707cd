package gitrepo

import (
	"sync/atomic"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
)

// Endpoint is a remote repository.
type Endpoint struct {
	URL  string // as configured
	Safe string // URL without credentials
	Dial string // what go-git is given: see TransportURL
	// NoShallow is set once the server refused a shallow fetch.
	NoShallow atomic.Bool
}

// NewEndpoint returns the Endpoint of url.
func NewEndpoint(url string) *Endpoint {
	return &Endpoint{URL: url, Safe: RedactURL(url), Dial: TransportURL(url)}
}

// Remote returns the remote "origin" of s at ep.
func (ep *Endpoint) Remote(s storage.Storer) *git.Remote {
	return git.NewRemote(s, &config.RemoteConfig{Name: "origin", URLs: []string{ep.Dial}})
}

// KeepTip compacts *s to tip (see Compact) when tip moved since *last.
func KeepTip(s *storage.Storer, last *plumbing.Hash, ref plumbing.ReferenceName, tip plumbing.Hash) error {
	if tip == *last {
		return nil
	}
	out, err := Compact(*s, ref, tip)
	if err != nil {
		return err
	}
	*s, *last = out, tip
	return nil
}

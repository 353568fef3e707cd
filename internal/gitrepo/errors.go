package gitrepo

import (
	"errors"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// IsRejected reports whether a push failed because the remote ref moved
// since it was fetched — the client's fast-forward check, a lease the
// remote ref no longer holds, an unknown remote tip, or the server refusing
// the ref update — so refetching and rebuilding may succeed.
func IsRejected(err error) bool {
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

// IsShallowUnsupported reports whether a fetch failed because the server
// cannot serve a shallow fetch (go-git's in-process server).
func IsShallowUnsupported(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "shallow not supported") || strings.Contains(msg, "unsupported capability: shallow")
}

// RefMoved reports whether a fetch failed because the ref moved
// between the server's ref advertisement and the pack request: over smart
// HTTP they are two requests, and a ref that is force-pushed (a heartbeat)
// leaves the advertised commit unreachable, which git upload-pack refuses
// as "not our ref". A new fetch sees the new tip. go-git reports this as
// text only.
func RefMoved(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not our ref")
}

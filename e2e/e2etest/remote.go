package e2etest

import (
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/propagit/propagit/internal/gitserver"
)

// Remote is a bare fleet repository a scenario's controller follows and
// its checkouts push to.
type Remote struct {
	// URL is what the controller and the checkout are given; it may carry
	// credentials.
	URL string
	// Auth authenticates to URL; nil for none.
	Auth transport.AuthMethod
	// Dir is the bare repository on disk.
	Dir string
	// Server serves Dir over smart HTTP; nil for a file:// remote.
	Server *gitserver.Server
}

// HTTPRemote creates an empty bare repository, fleet.git, served over
// smart HTTP by git http-backend; the server stops when the test ends.
func HTTPRemote(t testing.TB) *Remote {
	t.Helper()
	root := t.TempDir()
	srv, err := gitserver.New(root, gitserver.Options{})
	if err != nil {
		t.Fatalf("failed to start the git server: %v", err)
	}
	t.Cleanup(srv.Close)
	url, err := srv.InitBare("fleet.git")
	if err != nil {
		t.Fatal(err)
	}
	return &Remote{URL: url, Dir: filepath.Join(root, "fleet.git"), Server: srv}
}

// FileRemote creates an empty bare repository reached through a file://
// URL.
func FileRemote(t testing.TB) *Remote {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fleet.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatalf("failed to create bare repository: %v", err)
	}
	return &Remote{URL: "file://" + dir, Dir: dir}
}

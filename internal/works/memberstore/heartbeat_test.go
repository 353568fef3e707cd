package memberstore

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

// bareRepos makes an empty bare works repository per cluster under a new
// folder and returns the store template that reaches them.
func bareRepos(t *testing.T, clusters ...string) (root, tmpl string) {
	t.Helper()
	root = t.TempDir()
	for _, c := range clusters {
		if _, err := git.PlainInit(filepath.Join(root, "works-"+c+".git"), true); err != nil {
			t.Fatal(err)
		}
	}
	return root, "file://" + root + "/works-{cluster}.git"
}

// tracked returns a store of the repositories tmpl reaches, with opts,
// tracking clusters.
func tracked(t *testing.T, tmpl string, opts gitstore.Options, clusters ...string) *Store {
	t.Helper()
	s, err := New(tmpl, opts, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	s.Track(clusters)
	return s
}

// TestMemberStoreRecorderHeartbeat: the store of one repository per
// member keeps the recording controller's heartbeat like the others do, so
// status --exit-code can tell a stopped controller there too.
func TestMemberStoreRecorderHeartbeat(t *testing.T) {
	clusters := []string{"c0", "c1", "c2"}
	_, tmpl := bareRepos(t, clusters...)
	s := tracked(t, tmpl, gitstore.Options{}, clusters...)
	workstest.CheckRecorderHeartbeat(t, s)
}

// TestMemberCannotForgeTheRecorderHeartbeat: member c2 can push anything
// to its own repository. Writing a heartbeat a day ahead there must not
// make a controller that stopped an hour ago look alive to a reader that
// reaches every member's repository; nor does c2 deleting its heartbeat
// make a live controller look stopped. The refused revision the
// controller wrote is read the same way: c2 can neither hide it nor, once
// the controller cleared it, put one back.
func TestMemberCannotForgeTheRecorderHeartbeat(t *testing.T) {
	clusters := []string{"c0", "c1", "c2"}
	root, tmpl := bareRepos(t, clusters...)
	ctx := ctxT(t)
	hub := tracked(t, tmpl, gitstore.Options{}, clusters...)
	last := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	refused := works.RecorderState{At: last, RefusedRevision: strings.Repeat("9a", 20), RefusedReason: "commit 9a9a9a9: not signed",
		RefusedSince: last.Add(-time.Minute)}
	if err := hub.PutRecorderHeartbeat(ctx, refused); err != nil {
		t.Fatal(err)
	}
	reader := func() works.RecorderState {
		t.Helper()
		r := tracked(t, tmpl, gitstore.Options{}, clusters...)
		state, err := r.RecorderHeartbeat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return state
	}
	if got := reader(); got != refused {
		t.Fatalf("before any forgery: %+v, want %+v", got, refused)
	}
	c2 := filepath.Join(root, "works-c2.git")
	forge(t, c2, gitstore.RecorderHeartbeatRef, "")
	if got := reader(); got != refused {
		t.Errorf("after c2 forged a heartbeat a day ahead without the refusal: %+v, want the controller's %+v", got, refused)
	}
	repo, err := git.PlainOpen(c2)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.RemoveReference(gitstore.RecorderHeartbeatRef); err != nil {
		t.Fatal(err)
	}
	if got := reader(); got != refused {
		t.Errorf("after c2 deleted its heartbeat: %+v, want the controller's %+v", got, refused)
	}

	clear := works.RecorderState{At: last.Add(time.Minute)}
	if err := hub.PutRecorderHeartbeat(ctx, clear); err != nil {
		t.Fatal(err)
	}
	forgeCommit(t, c2, gitstore.RecorderHeartbeatRef, "propagit: recorder heartbeat\n\nRefused-Revision: "+strings.Repeat("ab", 20)+
		"\nRefused-Since: 2026-12-03T17:00:00Z\nRefused-Reason: forged\n")
	if got := reader(); got != clear {
		t.Errorf("after c2 forged a refusal: %+v, want the controller's %+v", got, clear)
	}
}

package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// revSource serves the guard fleet's folder as revision rev.
type revSource struct {
	f   *guardFleet
	rev string
}

func (s *revSource) Fetch(context.Context) (Snapshot, error) {
	return Snapshot{Revision: s.rev, FS: s.f.fs, Root: "/repo"}, nil
}

func (s *revSource) ReadRevision(context.Context, string) (Snapshot, error) {
	return Snapshot{}, errors.New("revSource keeps no past revisions")
}

// TestLoadErrorSaysWhatStaysInForce: a revision that does not load names
// the revision that stays in force by its short hash, or, before any
// revision loaded, says nothing is applied (it said "no revi stays in
// force", a placeholder cut to seven characters, before).
func TestLoadErrorSaysWhatStaysInForce(t *testing.T) {
	const (
		bad1 = "1111111111111111111111111111111111111111"
		good = "2222222222222222222222222222222222222222"
		bad3 = "3333333333333333333333333333333333333333"
	)
	f := newGuardFleet(t)
	// A pull member: nothing to probe or apply to.
	f.write("clusters/m1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Pull\n")
	f.configMaps("cm", 1, true)
	broken := func() { f.write("broken.yaml", "apiVersion: v1\nkind: [ConfigMap\n") }
	src := &revSource{f: f}
	c := New(DefaultOptions(), src, f.store, f.store, nil, logr.Discard())
	c.clock = f.clock
	ctx := context.Background()
	// check runs a pass on rev and checks the source error the state
	// reports (what `propagit status` and the health endpoint show).
	check := func(rev, want string) {
		t.Helper()
		src.rev = rev
		err := c.Reconcile(ctx)
		msg := c.State().SourceError
		if !strings.HasPrefix(msg, want) {
			t.Fatalf("revision %s: source error %q, want it to start with %q", rev[:7], msg, want)
		}
		if strings.Contains(msg, "no revi ") {
			t.Errorf("revision %s: %q names a cut placeholder", rev[:7], msg)
		}
		if err != nil && err.Error() != msg {
			t.Errorf("revision %s: the pass returned %q, the state says %q", rev[:7], err, msg)
		}
	}

	broken()
	check(bad1, "revision 1111111 does not load; nothing is applied until a revision loads: ")
	if err := c.Reconcile(ctx); err == nil {
		t.Error("a pass with nothing in force and a revision that does not load returned no error")
	}
	if st := c.State(); st.Revision != "" {
		t.Errorf("a revision is in force although none loaded: %s", st.Revision)
	}

	if err := f.fs.RemoveAll("/repo/broken.yaml"); err != nil {
		t.Fatal(err)
	}
	src.rev = good
	if err := c.Reconcile(ctx); err != nil {
		t.Fatalf("revision %s: %v", good[:7], err)
	}
	if st := c.State(); st.Revision != good || st.SourceError != "" {
		t.Fatalf("after a good revision: state %+v", st)
	}

	broken()
	check(bad3, "revision 3333333 does not load; 2222222 stays in force: ")
	if st := c.State(); st.Revision != good {
		t.Errorf("revision in force %s, want %s", st.Revision, good)
	}
}

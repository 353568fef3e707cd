package memberstore

import (
	"path/filepath"
	"testing"

	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

// TestMemberStoreRollouts: with one repository per member the rollouts'
// record is kept too (in every member's repository), so a restarted
// controller resumes its rollouts.
func TestMemberStoreRollouts(t *testing.T) {
	clusters := []string{"c0", "c1", "c2"}
	_, tmpl := bareRepos(t, clusters...)
	s := tracked(t, tmpl, gitstore.Options{}, clusters...)
	workstest.CheckRolloutStates(t, s)
}

// TestMemberCannotForgeTheRollouts: member c2 rewrites the rollouts' record
// in its own repository (to open a wave early, or to name an old revision
// as the stable one). A controller that starts afresh still reads the
// record the controller wrote, with or without a signing key: c2 is
// outvoted. Two of three members forging the same record would be a
// majority; with a signing key both are refused, and no record is read
// (each rollout starts again from what the clusters run).
func TestMemberCannotForgeTheRollouts(t *testing.T) {
	clusters := []string{"c0", "c1", "c2"}
	root, tmpl := bareRepos(t, clusters...)
	ctx := ctxT(t)
	key := verifytest.SSHKey(t, "propagit-controller").Signer
	hub := tracked(t, tmpl, gitstore.Options{Signer: key}, clusters...)
	genuine := []byte(`{"rollouts":[{"policy":"web","phase":"Progressing","revision":"rev2","stableRevision":"rev1"}]}`)
	if err := hub.PutRollouts(ctx, genuine); err != nil {
		t.Fatal(err)
	}
	read := func(opts gitstore.Options) string {
		t.Helper()
		r := tracked(t, tmpl, opts, clusters...)
		data, err := r.Rollouts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(gitstore.Options{Signer: key}); got != string(genuine) {
		t.Fatalf("before any forgery: %q, want the controller's record", got)
	}
	forged := []byte(`{"rollouts":[{"policy":"web","phase":"Complete","revision":"rev2","stableRevision":"rev0"}]}`)
	forger := func(c string) {
		t.Helper()
		g, err := gitstore.New(gitstore.Options{URL: "file://" + filepath.Join(root, "works-"+c+".git")})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.PutRollouts(ctx, forged); err != nil {
			t.Fatal(err)
		}
	}
	forger("c2")
	for _, opts := range []gitstore.Options{{Signer: key}, {}} {
		if got := read(opts); got != string(genuine) {
			t.Errorf("after c2 forged its record (signing %v): %q, want the controller's record", opts.Signer != nil, got)
		}
	}
	forger("c1")
	if got := read(gitstore.Options{Signer: key}); got != "" {
		t.Errorf("two members forged the same record: read %q, want none (both refused, no majority left)", got)
	}
}

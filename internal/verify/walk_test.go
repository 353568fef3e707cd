package verify_test

import (
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// TestSupplyChainModeAllRefusesSignedMergeOfUnsigned builds
//
//	base (signed) ── a (signed) ──────── merge (signed)
//	           \── u (unsigned) ──────/
//
// "tip" accepts the merge (its own signature is good); "all" refuses it and
// names u; from base u is still found on the merge's second parent.
func TestSupplyChainModeAllRefusesSignedMergeOfUnsigned(t *testing.T) {
	key := verifytest.SSHKey(t, "ci@example.com")
	v := verifier(t, key)
	r := newRepo(t)
	base := r.commit(key)
	a := r.commit(key)
	r.reset(base)
	u := r.commit(nil)
	r.reset(a)
	merge := r.commit(key, a, u)

	if rep := v.Revision(r.r.Storer, merge.String(), base.String(), verify.ModeTip); rep.Error() != nil {
		t.Fatalf("tip mode: %v", rep.Error())
	}
	rep := v.Revision(r.r.Storer, merge.String(), base.String(), verify.ModeAll)
	err := rep.Error()
	if err == nil || !strings.Contains(err.Error(), u.String()[:7]) || verify.Reason(err) != verify.ReasonUnsigned {
		t.Fatalf("all mode: %v, want commit %s unsigned", err, u.String()[:7])
	}
	if len(rep.Results) != 3 {
		t.Errorf("all mode verified %d commits, want 3 (merge, a, u): %+v", len(rep.Results), rep.Results)
	}
	// From a, only merge and u are new.
	rep = v.Revision(r.r.Storer, merge.String(), a.String(), verify.ModeAll)
	if len(rep.Results) != 2 || rep.Error() == nil {
		t.Errorf("all mode from a: %d commits, error %v; want merge and u, u failing", len(rep.Results), rep.Error())
	}
	// From u (say it was accepted under an older policy) nothing unsigned is new.
	if rep := v.Revision(r.r.Storer, merge.String(), u.String(), verify.ModeAll); rep.Error() != nil || len(rep.Results) != 2 {
		t.Errorf("all mode from u: %d commits, %v; want merge and a, both good", len(rep.Results), rep.Error())
	}
	// The whole history: base, a, u, merge.
	if rep := v.Revision(r.r.Storer, merge.String(), "", verify.ModeAll); len(rep.Results) != 4 {
		t.Errorf("all mode from nothing verified %d commits, want 4", len(rep.Results))
	}
}

// TestSupplyChainRangeBound: a range longer than MaxCommits is refused
// with a clear error, not walked to its end.
func TestSupplyChainRangeBound(t *testing.T) {
	key := verifytest.SSHKey(t, "ci")
	r := newRepo(t)
	base := r.commit(key)
	var tip string
	for range 5 {
		tip = r.commit(key).String()
	}
	ks, err := verify.ParseKeys([]byte(key.Public), verify.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lim := verify.DefaultLimits()
	lim.MaxCommits = 3
	rep := verify.New(ks, lim).Revision(r.r.Storer, tip, base.String(), verify.ModeAll)
	if verify.Reason(rep.Error()) != verify.ReasonTooMany {
		t.Fatalf("got %v, want %s", rep.Error(), verify.ReasonTooMany)
	}
	t.Logf("%v", rep.Error())
}

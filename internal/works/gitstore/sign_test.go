package gitstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works"
)

// TestSupplyChainSignedWorks: the controller's store signs its commits; an
// agent's store trusting its key reads its Work, refuses the Works of a
// commit someone else pushed (unsigned, or signed by another key) with a
// *works.RefusedError naming the commit, and reads the next genuine one.
func TestSupplyChainSignedWorks(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) { checkSignedWorks(t, r) })
}

func checkSignedWorks(t *testing.T, r *remote) {
	ctx := ctxT(t)
	ctrlKey, other := verifytest.SSHKey(t, "propagit-controller"), verifytest.SSHKey(t, "mallory")
	keys := verifytest.TrustedKeys(t, ctrlKey)
	controller := r.store(t, func(o *Options) { o.Signer = ctrlKey.Signer })
	agent := r.store(t, func(o *Options) { o.WorkVerifier = &verify.TipVerifier{Keys: keys, Limits: verify.DefaultLimits()} })
	if _, err := controller.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	w, err := agent.ListCluster(ctx, "c0")
	if err != nil || w == nil || w.Spec.SourceRevision != "rev1" {
		t.Fatalf("genuine Work: %v, %v", w, err)
	}
	for i, forger := range []*Store{r.store(t), r.store(t, func(o *Options) { o.Signer = other.Signer })} {
		// Each forgery and each genuine Put differs from all before: go-git's
		// file:// server takes a have to stand for history a compacted
		// store no longer holds (see fetchTip).
		if _, err := forger.Put(ctx, "forged", fleet(2, 1, "forged", fmt.Sprint("evil", i))); err != nil {
			t.Fatal(err)
		}
		tip := r.History(t, worksBranch)[0].Hash.String()
		_, err := agent.ListCluster(ctx, "c0")
		var refused *works.RefusedError
		if !errors.As(err, &refused) || refused.Commit != tip {
			t.Fatalf("forged Work: %v, want refused commit %s", err, tip[:7])
		}
		t.Logf("%v (reason %s)", err, verify.Reason(err))
		rev := fmt.Sprint("rev", i+2)
		if _, err := controller.Put(ctx, rev, fleet(2, 1, rev, rev)); err != nil {
			t.Fatal(err)
		}
		w, err := agent.ListCluster(ctx, "c0")
		if err != nil || w == nil || w.Spec.SourceRevision != rev {
			t.Fatalf("genuine Work after the forged one: %v, %v", w, err)
		}
	}
}

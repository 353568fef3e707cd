package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/workstest"
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

// TestSupplyChainForgedRolloutsRefused: the rollouts' record lives in the
// status repository, which pull agents push to. With a signing key the
// controller's store signs the record and reads back only what its own
// key signed: a record an agent pushed (unsigned, or signed by another
// key) is refused with a *works.RefusedError naming the commit, and the
// controller's next write is read again.
func TestSupplyChainForgedRolloutsRefused(t *testing.T) {
	r := httpRemote(t)
	ctx := ctxT(t)
	ctrlKey, other := verifytest.SSHKey(t, "propagit-controller"), verifytest.SSHKey(t, "mallory")
	controller := r.store(t, func(o *Options) { o.Signer = ctrlKey.Signer })
	workstest.CheckRolloutStates(t, controller)
	for i, forger := range []*Store{r.store(t), r.store(t, func(o *Options) { o.Signer = other.Signer })} {
		forged := fmt.Sprintf(`{"rollouts":[{"policy":"web","phase":"Complete","stableRevision":"evil%d"}]}`, i)
		if err := forger.PutRollouts(ctx, []byte(forged)); err != nil {
			t.Fatal(err)
		}
		data, err := controller.Rollouts(ctx)
		var refused *works.RefusedError
		if !errors.As(err, &refused) || data != nil {
			t.Fatalf("forged record %d: %q, %v; want it refused", i, data, err)
		}
		if !strings.Contains(err.Error(), "rollouts") || refused.Commit == "" {
			t.Errorf("the refusal does not name the record and its commit: %v", err)
		}
		genuine := fmt.Sprintf(`{"rollouts":[{"policy":"web","phase":"Progressing","revision":"rev%d"}]}`, i)
		if err := controller.PutRollouts(ctx, []byte(genuine)); err != nil {
			t.Fatal(err)
		}
		if data, err := controller.Rollouts(ctx); err != nil || string(data) != genuine {
			t.Fatalf("the controller's record after the forged one: %q, %v", data, err)
		}
	}
}

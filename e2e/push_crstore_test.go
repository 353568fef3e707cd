package e2e

import (
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// quickstartSecretNamespace is where the quickstart's Clusters say their
// credentials are (spec.secretRef).
const quickstartSecretNamespace = "karmada-cluster"

// TestPushCRStore is the quickstart with Works kept as Work custom
// resources on a hub (a third member with the CRD from deploy/), and with
// member credentials read from the hub Secrets the Clusters' spec.secretRef
// name, not from kubeconfig files.
func TestPushCRStore(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 3})
	members, hubMember := env.Members[:2], env.Members[2]
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	e2etest.CreateNamespace(t, hub, quickstartSecretNamespace)
	for _, m := range members {
		putMemberSecret(t, hub, quickstartSecretNamespace, m.Name, m)
	}
	remote := e2etest.HTTPRemote(t)
	s := newSetup(t, remote)
	s.KubeconfigDir = ""
	s.Hub, s.HubNamespace = hub, hubNS
	// A Cluster's apiEndpoint must be its credential's server: the
	// example's placeholders become the members' real endpoints.
	prepare := func(co *e2etest.Checkout) {
		for _, m := range members {
			co.Edit(fleetDir+"/clusters/"+m.Name+".yaml", "https://"+m.Name+".clusters.example.internal:6443", m.Config.Host)
		}
	}
	runQuickstart(t, quickstart{remote: remote, members: members, setup: s, status: newCRStatusReader(t, hub, hubNS), prepare: prepare})
	// With the CR store the controller only reads the source repository.
	repo, err := git.PlainOpen(remote.Dir)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := repo.References()
	if err != nil {
		t.Fatal(err)
	}
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if name := r.Name().String(); name != "HEAD" && name != "refs/heads/"+branch {
			t.Errorf("the source repository has ref %s; with the CR store the controller must not write it", name)
		}
		return nil
	})
}

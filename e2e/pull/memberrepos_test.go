package pull

import (
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/testenv"
)

// gitAccount is a basic-auth account of the test Git server.
func gitAccount(user, password string) *githttp.BasicAuth {
	return &githttp.BasicAuth{Username: user, Password: password}
}

// memberRepos is two pull members, A and B, each with its own works
// repository (--works-repo holding {cluster}) on a real smart-HTTP
// server beside the fleet's source repository: the controller's account
// reaches every repository, each agent's account only its member's works
// repository (as a deploy key does).
type memberRepos struct {
	srv       *gitserver.Server
	sourceURL string
	// worksTemplate is the works repositories' URL with {cluster}, as
	// --works-repo takes it.
	worksTemplate string
	// admin is the controller's account; authA and authB the agents'.
	admin, authA, authB *githttp.BasicAuth
	// fleet is a working copy of the source, pushing as admin.
	fleet *fleet
	// rev1 is the first source commit: A and B as pull members, Namespace
	// ns, the policy and ConfigMap app at v1.
	rev1 string
}

// startMemberRepos starts the server for members a and b and commits
// rev1 with policy (sending ConfigMap app of ns to both).
func startMemberRepos(t *testing.T, a, b *testenv.Member, ns, policy string) *memberRepos {
	t.Helper()
	r := &memberRepos{admin: gitAccount("propagit", "controller-pw"), authA: gitAccount("agent-a", "a-pw"), authB: gitAccount("agent-b", "b-pw")}
	srv, err := gitserver.New(t.TempDir(), gitserver.Options{Username: r.admin.Username, Password: r.admin.Password,
		Users: []gitserver.User{
			{Username: r.authA.Username, Password: r.authA.Password, Repos: []string{"works-" + a.Name + ".git"}},
			{Username: r.authB.Username, Password: r.authB.Password, Repos: []string{"works-" + b.Name + ".git"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	r.srv = srv
	if r.sourceURL, err = srv.InitBare("fleet.git"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*testenv.Member{a, b} {
		if _, err := srv.InitBare("works-" + m.Name + ".git"); err != nil {
			t.Fatal(err)
		}
	}
	r.worksTemplate = srv.URL + "/works-{cluster}.git"
	r.fleet = &fleet{Checkout: e2etest.NewCheckout(t, r.sourceURL, sourceBranch, r.admin), t: t}
	r.fleet.write("clusters/"+a.Name+".yaml", e2etest.ClusterYAML(a.Name, clusterv1alpha1.SyncModePull))
	r.fleet.write("clusters/"+b.Name+".yaml", e2etest.ClusterYAML(b.Name, clusterv1alpha1.SyncModePull))
	r.fleet.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	r.fleet.write("policy.yaml", policy)
	r.fleet.write("app.yaml", configMapYAML(ns, "app", "v1"))
	r.rev1 = r.fleet.CommitPush("app on two pull members, each with its own works repository")
	return r
}

// worksURL is the URL of m's works repository.
func (r *memberRepos) worksURL(m *testenv.Member) string {
	return r.srv.RepoURL("works-" + m.Name + ".git")
}

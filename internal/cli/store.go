package cli

import (
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/memberstore"
)

// storeOptions choose where Work records and their status live.
type storeOptions struct {
	kind          string
	branch        string
	worksRepo     string
	hubKubeconfig kubeconfigOptions
	namespace     string
	// heartbeat is how often an agent with nothing new to report still
	// reports (CR status, or the git store's heartbeat ref); 0 writes on
	// transitions only.
	heartbeat time.Duration
	// cluster, set by the agent, expands a --works-repo template to its
	// own repository; the controller leaves it empty and reaches every
	// member's.
	cluster string
	// log receives the store's own warnings.
	log logr.Logger
	// prepareHub, when set, may change the hub's config before any client
	// is built from it (the agent moves its token into a renewable file).
	prepareHub func(*rest.Config) error
	// signer signs the git store's commits (the controller's
	// --works-signing-key); workVerifier checks the Works' commits (the
	// agent's --works-trusted-keys). Nil: neither.
	signer       gitstore.CommitSigner
	workVerifier gitstore.TipVerifier
}

func (s *storeOptions) bindFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.kind, "works-store", "git", `where Works are recorded: "git" (a work branch and per-cluster status refs) or "cr" (Work custom resources on the hub)`)
	f.StringVar(&s.branch, "works-branch", "propagit/works", "work branch of the git store")
	f.StringVar(&s.worksRepo, "works-repo", "", "repository of the git store (default: the source repository); {cluster} in its path gives each member its own (isolated) repository")
	s.hubKubeconfig.bindFlags(f, "hub-", "the hub", "the in-cluster config when running in a cluster")
	bindControllerNamespace(f, &s.namespace, "propagit-system", "hub namespace of the controller (leader election); Work records live in propagit-member-<cluster>, and those earlier versions kept here are moved there")
}

// stores are the built Work and status stores, and a hub reader when a hub
// is configured.
type stores struct {
	works     works.Store
	status    works.StatusStore
	hub       client.Client
	hubConfig *rest.Config
}

func (s *storeOptions) build(repo gitOptions, auth transport.AuthMethod, cacheDir string) (*stores, error) {
	hubConfig, hub, err := s.hubClient()
	if err != nil {
		return nil, err
	}
	st, err := s.buildStores(repo, auth, cacheDir, hub)
	if err != nil {
		return nil, err
	}
	st.hubConfig = hubConfig
	return st, nil
}

func (s *storeOptions) buildStores(repo gitOptions, auth transport.AuthMethod, cacheDir string, hub client.Client) (*stores, error) {
	switch s.kind {
	case "git":
		return s.buildGit(repo, auth, cacheDir, hub)
	case "cr":
		if hub == nil {
			return nil, fmt.Errorf("--works-store cr needs a hub: pass --hub-kubeconfig (and --hub-context), set $KUBECONFIG, or run in a cluster")
		}
		return newCRStores(hub, s.namespace, s.heartbeat)
	}
	return nil, fmt.Errorf(`--works-store must be "git" or "cr", not %q`, s.kind)
}

// buildGit builds the git store: one shared repository, or one repository
// per member when --works-repo holds {cluster} (the agent's own only).
func (s *storeOptions) buildGit(repo gitOptions, auth transport.AuthMethod, cacheDir string, hub client.Client) (*stores, error) {
	url := s.worksRepo
	if url == "" {
		url = repo.url
	}
	opts := gitstore.Options{URL: url, Auth: auth, Branch: s.branch, CacheDir: cacheDir, HeartbeatInterval: s.heartbeat,
		Signer: s.signer, WorkVerifier: s.workVerifier}
	if memberstore.IsRepoTemplate(url) && s.cluster == "" {
		m, err := memberstore.New(url, opts, s.log)
		if err != nil {
			return nil, err
		}
		return &stores{works: m, status: m, hub: hub}, nil
	}
	if memberstore.IsRepoTemplate(url) {
		t, err := memberstore.ParseRepoTemplate(url)
		if err != nil {
			return nil, err
		}
		if opts.URL, err = t.URL(s.cluster); err != nil {
			return nil, err
		}
	}
	g, err := gitstore.New(opts)
	if err != nil {
		return nil, err
	}
	return &stores{works: g, status: g, hub: hub}, nil
}

// hubClient returns the hub's config and client, or nils when there is none.
func (s *storeOptions) hubClient() (*rest.Config, client.Client, error) {
	cfg, err := s.hubKubeconfig.restConfig(false)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to build the hub client: %w", err)
	}
	if cfg == nil {
		return nil, nil, nil
	}
	if s.prepareHub != nil {
		if err := s.prepareHub(cfg); err != nil {
			return nil, nil, err
		}
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	if err := workv1alpha1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return cfg, c, err
}

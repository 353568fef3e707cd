package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/secrets/keys"
)

type agentOptions struct {
	repo       gitOptions
	store      storeOptions
	kubeconfig kubeconfigOptions
	heartbeat  time.Duration
	cacheDir   string
	// metricsAddr serves /metrics: the same apply, health and drift
	// series as the controller's, for this member.
	metricsAddr string
	agent       agent.Options
	log         logging.Options
	keys        keyOptions
	// hubSecret is the member Secret (namespace/name) holding the hub
	// kubeconfig; the renewed hub token is written back to it.
	hubSecret    string
	worksSigning worksSigningOptions
}

func newAgentCommand() *cobra.Command {
	o := &agentOptions{agent: agent.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "agent --cluster NAME",
		Short: "Pull mode: apply this member's Work from inside the member",
		Long: `agent runs inside a member cluster the hub cannot reach. It reads only
its own cluster's Work — from the Git work branch (--works-store git, its
own repository with --works-repo https://git.example.com/fleet-works-{cluster}.git,
or the shared --repo) or from the Work custom resource in its own hub
namespace propagit-member-NAME (--works-store cr --hub-kubeconfig) —
applies it locally with server-side apply (same semantics as push mode:
inventory, prune, conflict resolution) and reports status, its cluster's
capacity and a heartbeat. It never needs credentials to other members.

Upgrade order: the controller first, then the agents. An agent that meets a
Work format newer than it understands applies nothing, keeps what runs, and
says "agent too old for Work format N" in its status.`,
		Example: `  propagit agent --cluster edge-7 --works-repo 'https://git.example.com/fleet-works-{cluster}.git'
  propagit agent --cluster edge-7 --repo https://git.example.com/fleet.git
  propagit agent --cluster edge-7 --works-store cr --hub-kubeconfig /etc/propagit/hub.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	o.agent.BindFlags(f)
	o.repo.bindFlags(cmd, "repo", "the repository holding the work branch (git store)")
	o.store.bindFlags(cmd)
	o.kubeconfig.bindFlags(f, "", "this member", "the in-cluster config, else ~/.kube/config")
	f.DurationVar(&o.heartbeat, "heartbeat-interval", 10*time.Second, "how often the agent reports it is alive when nothing else changed (the Work CR's status, or the git store's heartbeat ref)")
	f.StringVar(&o.cacheDir, "cache-dir", filepath.Join(os.TempDir(), "propagit-agent-cache"), "folder for the Git clone")
	f.StringVar(&o.metricsAddr, "metrics-addr", ":8080", "address of /metrics: apply results, drift and Work state of this member, as the controller exports them for push members (empty to disable)")
	f.StringVar(&o.hubSecret, "hub-secret", "", "NAMESPACE/NAME of the member Secret the --hub-kubeconfig is mounted from (key kubeconfig): the agent renews its hub token after two thirds of its life and writes it back there (empty: renewed in memory only)")
	o.log.BindFlags(f)
	o.keys.bindFlags(f, "the agent", true)
	o.worksSigning.bindVerifier(f)
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// validate checks every option before anything starts.
func (o *agentOptions) validate() error {
	if o.heartbeat < 0 {
		return fmt.Errorf("invalid --heartbeat-interval %s: must be 0 (transitions only) or positive", o.heartbeat)
	}
	if o.hubSecret != "" {
		if _, err := parseNamespacedName("--hub-secret", o.hubSecret); err != nil {
			return err
		}
	}
	return o.agent.Validate()
}

func (o *agentOptions) run(parent context.Context) error {
	ctx, stop, log, err := startDaemon(parent, o.validate, &o.log)
	if err != nil {
		return err
	}
	defer stop()
	member, err := o.memberConfig()
	if err != nil {
		return err
	}
	if o.repo.url == "" {
		o.repo.url = o.store.worksRepo // its credentials are for its works repository
	}
	auth, err := o.repo.auth()
	if err != nil {
		return err
	}
	o.store.heartbeat, o.store.cluster, o.store.log = o.heartbeat, o.agent.Cluster, log
	if err := o.setWorkVerifier(); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	var hubToken *agent.HubToken
	o.store.prepareHub = func(cfg *rest.Config) (err error) {
		hubToken, err = agent.KeepHubToken(cfg, o.repo.cacheDir(o.cacheDir))
		return err
	}
	st, err := o.store.build(o.repo, auth, filepath.Join(o.repo.cacheDir(o.cacheDir), "works"))
	if err != nil {
		return err
	}
	src, ok := st.works.(agent.Source)
	if !ok {
		return fmt.Errorf("works store %q cannot read one cluster's Work", o.store.kind)
	}
	opts := o.agent
	opts.Deliver.Version = version
	opts.Apply.DecryptKinds = o.keys.kinds // no script reads a kind that may be decrypted
	if opts.Keys, err = o.keySource(member); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	var servers []*server
	if o.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		opts.Deliver.Metrics = metrics.NewRecorder()
		opts.Deliver.Metrics.MustRegister(reg)
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		s, err := listen("--metrics-addr", o.metricsAddr, mux)
		if err != nil {
			return &ExitError{Code: 1, Err: err}
		}
		servers = append(servers, s)
	}
	log = log.WithValues(logging.KeyCluster, opts.Cluster)
	log.Info("agent started", "worksStore", o.store.kind)
	run := agent.New(opts, src, st.status, member, log).Run
	if hubToken != nil {
		if hubToken.Secret, hubToken.Member, err = o.hubSecretWriter(member); err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		hubToken.Log = log
		run = alongside(run, func(ctx context.Context) error { return hubToken.Run(ctx, time.Minute) })
	}
	if err := runGroup(ctx, run, servers...); err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// hubSecretWriter is the member Secret the renewed hub token goes to, and
// a client that writes it; zero when --hub-secret is not set.
func (o *agentOptions) hubSecretWriter(member *rest.Config) (types.NamespacedName, client.Client, error) {
	if o.hubSecret == "" {
		return types.NamespacedName{}, nil, nil
	}
	name, err := parseNamespacedName("--hub-secret", o.hubSecret)
	if err != nil {
		return name, nil, err
	}
	c, err := client.New(member, client.Options{})
	if err != nil {
		return name, nil, fmt.Errorf("failed to build the client that writes --hub-secret: %w", err)
	}
	return name, c, nil
}

// alongside runs side next to main until main returns.
func alongside(main, side func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- side(ctx) }()
		err := main(ctx)
		cancel()
		if serr := <-done; err == nil {
			err = serr
		}
		return err
	}
}

func (o *agentOptions) memberConfig() (*rest.Config, error) {
	return requireConfig(o.kubeconfig)
}

// keySource reads the age keys from the member the agent runs in; nil
// when no flag asks for decryption.
func (o *agentOptions) keySource(member *rest.Config) (keys.Finder, error) {
	var reader client.Reader
	if o.keys.secret != "" {
		c, err := client.New(member, client.Options{})
		if err != nil {
			return nil, fmt.Errorf("failed to build the client that reads --decryption-secret: %w", err)
		}
		reader = c
	}
	src, err := o.keys.source(reader, "", nil)
	if src == nil || err != nil {
		return nil, err
	}
	return src, nil
}

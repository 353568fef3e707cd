package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/events"
	"github.com/propagit/propagit/internal/helm/fetch"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/promgate"
	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/webhook"
)

type controllerOptions struct {
	repo          gitOptions
	branch        string
	path          string
	store         storeOptions
	kubeconfigDir string
	healthAddr    string
	httpAddr      string
	hooks         webhookOptions
	cacheDir      string
	controller    controller.Options
	log           logging.Options
	leader        leaderOptions
	shard         shardOptions
	limits        limitOptions
	notify        notifyOptions
	keys          keyOptions
	dashboardAddr string
	// chartCredentials is a .dockerconfigjson of the chart registries.
	chartCredentials string
	gateURL          string
	gateTokenFile    string
	verify           sourceVerifyOptions
	worksSigning     worksSigningOptions
}

func newControllerCommand() *cobra.Command {
	o := &controllerOptions{controller: controller.DefaultCommandOptions(), leader: defaultLeaderOptions()}
	cmd := &cobra.Command{
		Use:   "controller --repo URL",
		Short: "Reconcile a Git branch into the member clusters (push mode)",
		Long: `controller follows a Git branch, renders Works with Karmada's rules,
records them (a Git work branch or Work custom resources on a hub), applies
each push member's Work with server-side apply, and writes per-cluster status.

Credentials never live in Git: each member's credential is one Secret in the
hub namespace karmada-cluster labelled propagit.io/credentials-for=<cluster>
(server, caBundle and token keys, or a kubeconfig key; propagit join writes
it), and a Cluster in Git cannot point it elsewhere. Outside a cluster
--kubeconfig-dir holds <cluster>.kubeconfig files.`,
		Example: `  propagit controller --repo https://git.example.com/fleet.git --branch main \
    --kubeconfig-dir ./members --works-store git
  propagit controller --repo file:///srv/fleet.git --works-store cr --hub-kubeconfig hub.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	o.repo.bindFlags(cmd, "repo", "the Git repository to follow")
	f.StringVar(&o.branch, "branch", "main", "branch to follow")
	f.StringVar(&o.path, "path", "", "folder inside the repository holding the fleet (default: the root)")
	o.store.bindFlags(cmd)
	f.StringVar(&o.kubeconfigDir, "kubeconfig-dir", "", "folder of <cluster>.kubeconfig files (outside a cluster)")
	f.StringVar(&o.healthAddr, "health-addr", ":8081", "address of /healthz and /readyz (empty to disable)")
	f.StringVar(&o.httpAddr, "http-addr", ":8080", "address of /metrics and the Git webhook "+webhook.Path+" (empty to disable)")
	o.hooks.bindFlags(cmd)
	f.StringVar(&o.cacheDir, "cache-dir", filepath.Join(os.TempDir(), "propagit-cache"), "folder for the Git clones and the remote Helm charts (under charts/)")
	f.StringVar(&o.gateURL, "rollout-prometheus-url", "", "Prometheus server the RolloutPolicy waves' gates query (their queries come from Git; the server, from here only)")
	f.StringVar(&o.gateTokenFile, "rollout-prometheus-token-file", "", "file holding a bearer token for --rollout-prometheus-url (a mounted Secret)")
	f.StringVar(&o.chartCredentials, "chart-credentials", "", "a .dockerconfigjson file (a mounted Secret) with the credentials of the Helm chart repositories and OCI registries, each sent only to its own host")
	o.controller.BindFlags(f)
	bindRenderFlags(f, &o.controller.Render)
	o.leader.bindFlags(f)
	o.shard.bindFlags(f)
	o.log.BindFlags(f)
	o.limits.bindFlags(f)
	o.notify.bindFlags(f)
	o.keys.bindFlags(f, "the controller", false)
	o.verify.bindFlags(f)
	o.worksSigning.bindSigner(f)
	f.StringVar(&o.dashboardAddr, "dashboard-addr", "", "address of the read-only web dashboard, e.g. 127.0.0.1:8082 (empty to disable; token from $"+dashboardTokenEnv+")")
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}

// validate checks every option before anything starts.
func (o *controllerOptions) validate() error {
	if err := o.controller.Validate(); err != nil {
		return err
	}
	if err := o.verify.validate(); err != nil {
		return err
	}
	if o.worksSigning.signingKey != "" && o.store.kind != "git" {
		return fmt.Errorf("--works-signing-key signs the commits of the git works store; with --works-store %s the Works are protected by RBAC on each member's hub namespace", o.store.kind)
	}
	return o.leader.validate()
}

func (o *controllerOptions) run(parent context.Context) error {
	ctx, stop, log, err := startDaemon(parent, o.validate, &o.log)
	if err != nil {
		return err
	}
	defer stop()
	setMemoryLimit(log)

	auth, err := o.repo.auth()
	if err != nil {
		return err
	}
	follower := source.NewFollower(source.FollowOptions{URL: o.repo.url, Branch: o.branch, Path: o.path, Auth: auth,
		CacheDir: filepath.Join(o.repo.cacheDir(o.cacheDir), "source"), Limits: o.limits.sourceLimits()})
	o.store.log = log
	if o.store.signer, err = o.worksSigning.signer(); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	stores, err := o.store.build(o.repo, auth, filepath.Join(o.repo.cacheDir(o.cacheDir), "works"))
	if err != nil {
		return err
	}
	if (o.leader.enabled || o.shard.enabled) && stores.hubConfig == nil {
		return errors.New("--leader-elect and --shard need a hub: pass --hub-kubeconfig or run in a cluster")
	}
	opts := o.controller
	opts.Deliver.Version = version
	chartCreds, err := charts.Credentials(o.chartCredentials)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if opts.RolloutGate, err = o.rolloutGate(); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	opts.ChartRemote = charts.FetchWith(&fetch.Fetcher{CacheDir: filepath.Join(o.cacheDir, "charts"), Credentials: chartCreds})
	// No script reads, and no apiserver message is kept about, a kind that may be decrypted.
	opts.Apply.DecryptKinds = append(append([]string{}, o.limits.DecryptKinds...), o.keys.kinds...)
	creds := &cluster.Credentials{KubeconfigDir: o.kubeconfigDir, Hub: stores.hub, Writer: stores.hub, Namespace: cluster.DefaultNamespace,
		QPS: opts.Apply.QPS, Burst: opts.Apply.Burst}
	keySrc, err := o.keys.source(stores.hub, cluster.DefaultNamespace, o.limits.DecryptKinds)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if keySrc != nil {
		opts.Keys = keySrc
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Metrics = metrics.NewRecorder()
	opts.Metrics.MustRegister(reg)
	opts.Deliver.Metrics = opts.Metrics
	if opts.Notifier, err = o.notify.notifier(log); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if o.store.kind == "cr" && stores.hubConfig != nil {
		rec, err := events.New(stores.hubConfig)
		if err != nil {
			return err
		}
		defer rec.Stop()
		opts.Events = rec
	}
	var c *controller.Controller
	var sh *shard.Sharder
	if o.shard.enabled {
		sh, err = o.shard.sharder(stores.hubConfig, o.store.namespace, o.leader, func() *controller.Controller { return c }, log)
		if err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		opts.Sharding = sh
	}
	fetcher := controller.GitFetcher(follower)
	if v := o.verify.verification(); v != nil {
		fetcher = controller.VerifiedGitFetcher(follower, v)
	}
	c = controller.New(opts, limitedFetcher{fetcher, o.loadOptions()}, stores.works, stores.status, creds, log)
	var hook http.Handler
	if o.httpAddr != "" {
		if hook, err = o.hooks.handler(o.branch, c, opts.Metrics, log); err != nil {
			return err
		}
	}
	servers, err := o.listen(c, reg, hook)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	run := c.Run
	switch {
	case o.shard.enabled:
		run = func(ctx context.Context) error { return runSharded(ctx, sh, c.Run) }
	case o.leader.enabled:
		run = func(ctx context.Context) error {
			return o.leader.runAsLeader(ctx, stores.hubConfig, o.store.namespace, log, c.Run)
		}
	}
	if o.dashboardAddr != "" {
		if servers, run, err = o.addDashboard(servers, run, stores, auth, log); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
	}
	log.Info("controller started", "repo", o.repo.safeURL(), "branch", o.branch, "worksStore", o.store.kind)
	if err := runGroup(ctx, run, servers...); err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// listen binds the controller's HTTP servers: /healthz and /readyz on
// --health-addr, /metrics and the webhook on --http-addr. Nothing is left
// bound when one of them fails.
func (o *controllerOptions) listen(c *controller.Controller, reg *prometheus.Registry, hook http.Handler) ([]*server, error) {
	var servers []*server
	fail := func(err error) ([]*server, error) {
		for _, s := range servers {
			_ = s.ln.Close()
		}
		return nil, err
	}
	if o.healthAddr != "" {
		s, err := listen("--health-addr", o.healthAddr, healthHandler(c))
		if err != nil {
			return fail(err)
		}
		servers = append(servers, s)
	}
	if o.httpAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle(webhook.Path, hook)
		s, err := listen("--http-addr", o.httpAddr, mux)
		if err != nil {
			return fail(err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// startDaemon is the preamble of a long-running command (controller,
// agent): the options are checked (exit code 2 when one is wrong), the
// logger is built and given to controller-runtime, and the context ends on
// SIGINT or SIGTERM; call stop when done.
func startDaemon(parent context.Context, validate func() error, lo *logging.Options) (context.Context, context.CancelFunc, logr.Logger, error) {
	if err := validate(); err != nil {
		return nil, nil, logr.Logger{}, &ExitError{Code: 2, Err: err}
	}
	log, err := lo.New()
	if err != nil {
		return nil, nil, logr.Logger{}, err
	}
	ctrl.SetLogger(log)
	ctx, stop := signal.NotifyContext(orBackground(parent), os.Interrupt, syscall.SIGTERM)
	return ctx, stop, log, nil
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// healthHandler serves /healthz (the process runs) and /readyz (a
// revision has been loaded and rendered).
func healthHandler(c *controller.Controller) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !c.Ready() {
			http.Error(w, "no revision loaded yet: "+c.State().SourceError, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// shutdownTimeout bounds how long a stopping server waits for the requests
// in flight.
const shutdownTimeout = 5 * time.Second

// server is one HTTP server of the process, bound before anything runs so
// that an address in use stops the process at once.
type server struct {
	flag string // the flag that chose the address
	srv  *http.Server
	ln   net.Listener
}

func listen(flag, addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("failed to listen on %s %s: %w", flag, addr, err)
	}
	return &server{flag: flag, srv: webhook.Server(addr, h), ln: ln}, nil
}

// runGroup runs fn (the controller or the agent) and serves servers, as
// one group: when ctx ends, fn returns or any of them fails, the others
// are stopped too — servers gracefully, with shutdownTimeout for the
// requests in flight — and runGroup returns the first error once every one
// has returned.
func runGroup(ctx context.Context, fn func(context.Context) error, servers ...*server) error {
	g, ctx := errgroup.WithContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.Go(func() error {
		defer cancel() // fn done: stop serving
		return fn(ctx)
	})
	for _, s := range servers {
		g.Go(func() error {
			if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("failed to serve %s %s: %w", s.flag, s.ln.Addr(), err)
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			if err := s.srv.Shutdown(sctx); err != nil {
				return fmt.Errorf("failed to shut down %s %s: %w", s.flag, s.ln.Addr(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// loadOptions are the load limits with the restriction policy, whose
// folder rules bind the source's policies as they bind its templates.
func (o *controllerOptions) loadOptions() load.Options {
	opts := o.limits.Options
	opts.Restrictions = o.controller.Render.Restrictions
	return opts
}

// rolloutGate is the Prometheus client of the waves' gates; nil without
// --rollout-prometheus-url.
func (o *controllerOptions) rolloutGate() (*promgate.Client, error) {
	if o.gateURL == "" {
		if o.gateTokenFile != "" {
			return nil, errors.New("--rollout-prometheus-token-file needs --rollout-prometheus-url")
		}
		return nil, nil
	}
	u, err := url.Parse(o.gateURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("--rollout-prometheus-url %q: want an http(s) URL without credentials in it (use --rollout-prometheus-token-file)", o.gateURL)
	}
	c := &promgate.Client{URL: o.gateURL}
	if o.gateTokenFile != "" {
		data, err := os.ReadFile(o.gateTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--rollout-prometheus-token-file: %w", err)
		}
		c.Token = strings.TrimSpace(string(data))
	}
	return c, nil
}

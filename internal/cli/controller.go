package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/webhook"
)

type controllerOptions struct {
	repo                               gitOptions
	branch                             string
	path                               string
	interval                           time.Duration
	store                              storeOptions
	kubeconfigDir                      string
	healthAddr                         string
	httpAddr                           string
	hooks                              webhookOptions
	cacheDir                           string
	pullTimeout                        time.Duration
	driftInterval                      time.Duration
	probeInterval                      time.Duration
	noDriftWatch                       bool
	failureThreshold, successThreshold time.Duration
	qps                                float32
	burst                              int
	log                                logging.Options
	leader                             leaderOptions
	limits                             limitOptions
}

func newControllerCommand() *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller --repo URL",
		Short: "Reconcile a Git branch into the member clusters (push mode)",
		Long: `controller follows a Git branch, renders Works with Karmada's rules,
records them (a Git work branch or Work custom resources on a hub), applies
each push member's Work with server-side apply, and writes per-cluster status.

Credentials never live in Git: a Cluster's spec.secretRef names a Secret in
the controller's namespace (Karmada's token/caBundle keys with
spec.apiEndpoint, or a kubeconfig key); outside a cluster --kubeconfig-dir
holds <cluster>.kubeconfig files.`,
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
	f.DurationVar(&o.interval, "interval", time.Minute, "how often to poll the repository")
	f.DurationVar(&o.probeInterval, "probe-interval", 10*time.Second, "how long a member probe (readiness, APIs, capacity) is reused; a webhook push soon after a pass does not probe again")
	o.store.bindFlags(cmd)
	f.StringVar(&o.kubeconfigDir, "kubeconfig-dir", "", "folder of <cluster>.kubeconfig files (outside a cluster)")
	f.StringVar(&o.healthAddr, "health-addr", ":8081", "address of /healthz and /readyz (empty to disable)")
	f.StringVar(&o.httpAddr, "http-addr", ":8080", "address of /metrics and the Git webhook "+webhook.Path+" (empty to disable)")
	o.hooks.bindFlags(cmd)
	f.StringVar(&o.cacheDir, "cache-dir", filepath.Join(os.TempDir(), "propagit-cache"), "folder for the Git clones")
	f.DurationVar(&o.failureThreshold, "cluster-failure-threshold", 30*time.Second, "how long a member must fail its probes before it is NotReady (and failover clocks start from its first failed probe)")
	f.DurationVar(&o.successThreshold, "cluster-success-threshold", 30*time.Second, "how long a member must pass its probes before it is Ready again")
	f.DurationVar(&o.driftInterval, "drift-interval", 5*time.Minute, "how often the whole member is compared with its Work and drift corrected (0 disables); between checks, a watch on the applied objects catches changes at once")
	f.BoolVar(&o.noDriftWatch, "no-drift-watch", false, "do not watch applied objects; find drift with the periodic check only")
	f.DurationVar(&o.pullTimeout, "pull-heartbeat-timeout", time.Minute, "a pull member whose agent has not reported for this long is not Ready (0 disables); keep it above the agents' --heartbeat-interval")
	f.Float32Var(&o.qps, "member-qps", 200, "client QPS per member (client-go's default of 5 throttles server-side apply)")
	f.IntVar(&o.burst, "member-burst", 400, "client burst per member")
	f.BoolVar(&o.leader.enabled, "leader-elect", false, "hold a Lease on the hub before acting, so several replicas can run (needs a hub)")
	f.DurationVar(&o.leader.lease, "leader-elect-lease-duration", 15*time.Second, "lease duration")
	f.DurationVar(&o.leader.renew, "leader-elect-renew-deadline", 10*time.Second, "renew deadline")
	f.DurationVar(&o.leader.retry, "leader-elect-retry-period", 2*time.Second, "retry period")
	f.StringVar(&o.leader.name, "leader-elect-lease-name", "propagit-controller", "name of the Lease in --namespace")
	o.log.BindFlags(f)
	o.limits.bindFlags(f)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}

func (o *controllerOptions) run(parent context.Context) error {
	log, err := o.log.New()
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	setMemoryLimit(log)
	ctx, stop := signal.NotifyContext(orBackground(parent), os.Interrupt, syscall.SIGTERM)
	defer stop()

	auth, err := o.repo.auth()
	if err != nil {
		return err
	}
	follower := source.NewFollower(source.FollowOptions{URL: o.repo.url, Branch: o.branch, Path: o.path, Auth: auth,
		CacheDir: filepath.Join(o.repo.cacheDir(o.cacheDir), "source"), Limits: o.limits.sourceLimits()})
	stores, err := o.store.build(o.repo, auth, filepath.Join(o.repo.cacheDir(o.cacheDir), "works"))
	if err != nil {
		return err
	}
	creds := &cluster.Credentials{KubeconfigDir: o.kubeconfigDir, Hub: stores.hub, Namespace: o.store.namespace, QPS: o.qps, Burst: o.burst}
	opts := controller.DefaultOptions()
	opts.Interval, opts.Deliver.Version = o.interval, version
	opts.Apply.QPS, opts.Apply.Burst = o.qps, o.burst
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = o.failureThreshold, o.successThreshold
	opts.Deliver.DriftInterval = o.driftInterval
	opts.ProbeInterval = o.probeInterval
	opts.Deliver.NoWatch = o.noDriftWatch
	opts.PullHeartbeatTimeout = o.pullTimeout
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Metrics = metrics.NewRecorder()
	opts.Metrics.MustRegister(reg)
	opts.Deliver.Metrics = opts.Metrics
	c := controller.New(opts, limitedFetcher{controller.GitFetcher(follower), o.limits.Options}, stores.works, stores.status, creds, log)
	if o.healthAddr != "" {
		go serveHealth(ctx, o.healthAddr, c, log)
	}
	if o.httpAddr != "" {
		hook, err := o.hooks.handler(o.branch, c, opts.Metrics, log)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle(webhook.Path, hook)
		go serve(ctx, o.httpAddr, mux, log)
	}
	log.Info("controller started", "repo", o.repo.safeURL(), "branch", o.branch, "worksStore", o.store.kind)
	if !o.leader.enabled {
		return c.Run(ctx)
	}
	if stores.hubConfig == nil {
		return errors.New("--leader-elect needs a hub: pass --hub-kubeconfig or run in a cluster")
	}
	return o.leader.runAsLeader(ctx, stores.hubConfig, o.store.namespace, log, func(ctx context.Context) { _ = c.Run(ctx) })
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// serveHealth serves /healthz (the process runs) and /readyz (a revision
// has been loaded and rendered).
func serveHealth(ctx context.Context, addr string, c *controller.Controller, log logr.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !c.Ready() {
			http.Error(w, "no revision loaded yet: "+c.State().SourceError, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	serve(ctx, addr, mux, log)
}

// serve runs an HTTP server until ctx ends.
func serve(ctx context.Context, addr string, h http.Handler, log logr.Logger) {
	srv := webhook.Server(addr, h)
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error(err, "HTTP server stopped", "addr", addr)
	}
}

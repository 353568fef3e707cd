package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/propagit/propagit/internal/dashboard"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/source"
)

// dashboardTokenEnv holds the dashboard's bearer token when no
// --token-file is given (secrets never come from flags).
const dashboardTokenEnv = "PROPAGIT_DASHBOARD_TOKEN"

type dashboardOptions struct {
	// source is SOURCE (or --source); it sets repo.url and path, which
	// the deprecated --repo and --path set before it.
	source     string
	repo       gitOptions
	branch     string
	path       string
	store      storeOptions
	addr       string
	tokenFile  string
	userHeader string
	refresh    time.Duration
	limits     limitOptions
	log        logging.Options
}

func newDashboardCommand() *cobra.Command {
	o := &dashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard [SOURCE] | --works-store cr --hub-kubeconfig FILE [SOURCE]",
		Short: "Serve a read-only web view of the fleet from the recorded status",
		Long: `dashboard serves web pages of the fleet — members, revisions and their
rollout, templates with their explain trace and rendered manifests, and
events — read from the same records as propagit status: the work branch and
status refs of the git store, or the Work custom resources of the cr store.
It never talks to members and changes nothing. SOURCE (or --source) is the
fleet: URL//PATH (PATH the fleet's folder in the repository, the root when
left out) or a folder inside a Git checkout; the dashboard reads its
--branch for commit times, member labels and explain traces, and the git
store's records from the same repository unless --works-repo names
another.

It binds to 127.0.0.1 unless told otherwise, and then answers only requests
addressed to localhost, 127.0.0.1 or [::1] (a page on another name that
resolves to this host is refused). On any other address it requires a
bearer token (--token-file or $` + dashboardTokenEnv + `). Behind an
authenticating proxy on the same host that sends Host: localhost,
--user-header X-Forwarded-User refuses requests the proxy did not mark.`,
		Example: `  propagit dashboard https://git.example.com/fleet.git
  propagit dashboard https://git.example.com/fleet.git//clusters/prod --works-store cr --hub-kubeconfig hub.kubeconfig
  propagit dashboard https://git.example.com/fleet.git --addr :8080 --token-file /etc/propagit/token`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 0, &o.source); err != nil {
				return err
			}
			if err := o.locate(cmd); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	bindSource(cmd, &o.source, "", "the fleet: URL//PATH or a folder inside a Git checkout, whose repository also holds the git store's records; or give it as SOURCE")
	o.repo.bindFlags(cmd, "repo", "the fleet repository: its work branch (git store) and source branch")
	deprecateFlag(cmd, "repo", "give the fleet as SOURCE (or --source): URL//PATH, or a folder inside a checkout")
	f.StringVar(&o.branch, "branch", "main", "source branch the controller follows")
	f.StringVar(&o.path, "path", "", "folder inside the repository holding the fleet (default: the root)")
	deprecateFlag(cmd, "path", "give the fleet as SOURCE (or --source): URL//PATH, or a folder inside a checkout")
	o.store.bindFlags(cmd)
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to serve on")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token every request must carry (or set "+dashboardTokenEnv+")")
	f.StringVar(&o.userHeader, "user-header", "", "refuse requests without this header, set by an authenticating proxy (X-Forwarded-User)")
	f.DurationVar(&o.refresh, "refresh", 2*time.Second, "how often the records are read again")
	o.limits.bindFlags(f)
	o.log.BindFlags(f)
	return cmd
}

func (o *dashboardOptions) run(parent context.Context, stdout io.Writer) error {
	if o.refresh < minWaitInterval {
		return &ExitError{Code: 2, Err: fmt.Errorf("--refresh %s: want at least %s", o.refresh, minWaitInterval)}
	}
	if o.repo.url == "" && o.store.kind == "git" {
		return &ExitError{Code: 2, Err: fmt.Errorf("the git store needs the fleet's repository: give it as SOURCE (or --source)")}
	}
	log, err := o.log.New()
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	o.store.log = log
	ctx, st, done, err := openStores(parent, o.repo, o.store, "propagit-dashboard-*")
	if err != nil {
		return err
	}
	defer done()
	auth, err := o.repo.auth()
	if err != nil {
		return err
	}
	token, err := dashboardToken(o.tokenFile)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	opts := dashboardServerOptions(st, o.repo, o.branch, o.path, auth, o.limits, log)
	opts.Token, opts.UserHeader, opts.Refresh = token, o.userHeader, o.refresh
	srv, refresh, err := listenDashboard("--addr", o.addr, opts)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	log.Info("dashboard started", "addr", srv.ln.Addr().String(), "worksStore", o.store.kind)
	fmt.Fprintf(stdout, "Serving the dashboard on http://%s/ (Ctrl-C stops it)\n", srv.ln.Addr())
	if err := runGroup(ctx, refresh, srv); err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// locate takes the repository and the fleet folder from SOURCE, refusing
// it beside the deprecated --repo and --path it replaces.
func (o *dashboardOptions) locate(cmd *cobra.Command) error {
	if o.source == "" {
		return nil
	}
	if cmd.Flags().Changed("repo") || cmd.Flags().Changed("path") {
		return fmt.Errorf("SOURCE (or --source) names the repository and the folder: drop --repo and --path")
	}
	o.repo.url, o.path = splitSource(o.source)
	return nil
}

// dashboardToken reads the bearer token from file, else the environment;
// "" leaves the dashboard open (to whoever reaches its address).
func dashboardToken(file string) (string, error) {
	if file == "" {
		return os.Getenv(dashboardTokenEnv), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("failed to read --token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty", file)
	}
	return token, nil
}

// dashboardServerOptions reads the stores st and, when repo is set, the
// source branch through a Follower of its own (in memory: the dashboard
// keeps no clone on disk).
func dashboardServerOptions(st *stores, repo gitOptions, branch, path string, auth transport.AuthMethod, limits limitOptions, log logr.Logger) dashboard.Options {
	opts := dashboard.DefaultOptions()
	opts.Works, opts.Status, opts.Log, opts.Limits = st.works, st.status, log, limits.Options
	if repo.url != "" {
		opts.RepoURL = repo.safeURL()
		opts.Source = dashboard.NewGitSource(source.NewFollower(source.FollowOptions{URL: repo.url, Branch: branch, Path: path, Auth: auth,
			Limits: limits.sourceLimits()}))
	}
	return opts
}

// listenDashboard binds the dashboard's address and returns its server and
// the loop that keeps its records fresh.
func listenDashboard(flag, addr string, opts dashboard.Options) (*server, func(context.Context) error, error) {
	d, err := dashboard.New(opts)
	if err != nil {
		return nil, nil, err
	}
	s, err := listen(flag, addr, d)
	if err != nil {
		return nil, nil, err
	}
	if err := dashboard.RequireToken(s.ln.Addr(), opts); err != nil {
		_ = s.ln.Close()
		hint := "--token-file or $" + dashboardTokenEnv
		if flag != "--addr" {
			hint = "$" + dashboardTokenEnv
		}
		return nil, nil, fmt.Errorf("%s %s: %w: set %s, or serve on 127.0.0.1", flag, addr, err, hint)
	}
	return s, d.Run, nil
}

// withDashboard runs fn and the dashboard's refresh loop together; the
// dashboard stops with fn.
func withDashboard(fn, refresh func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		ctx, cancel := context.WithCancel(ctx)
		g.Go(func() error { return refresh(ctx) })
		g.Go(func() error {
			defer cancel()
			return fn(ctx)
		})
		return g.Wait()
	}
}

// addDashboard serves the dashboard on --dashboard-addr beside the
// controller, reading the controller's own stores; the bearer token comes
// from $PROPAGIT_DASHBOARD_TOKEN. servers are closed when it fails.
func (o *controllerOptions) addDashboard(servers []*server, run func(context.Context) error, st *stores, auth transport.AuthMethod,
	log logr.Logger) ([]*server, func(context.Context) error, error) {
	opts := dashboardServerOptions(st, o.repo, o.branch, o.path, auth, o.limits, log)
	opts.Token = os.Getenv(dashboardTokenEnv)
	srv, refresh, err := listenDashboard("--dashboard-addr", o.dashboardAddr, opts)
	if err != nil {
		for _, s := range servers {
			_ = s.ln.Close()
		}
		return nil, nil, err
	}
	return append(servers, srv), withDashboard(run, refresh), nil
}

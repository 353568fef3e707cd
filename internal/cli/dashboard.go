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
		Use:   "dashboard --repo URL | --works-store cr --hub-kubeconfig FILE",
		Short: "Serve a read-only web view of the fleet from the recorded status",
		Long: `dashboard serves web pages of the fleet — members, revisions and their
rollout, templates with their explain trace and rendered manifests, and
events — read from the same records as propagit status: the work branch and
status refs of the git store, or the Work custom resources of the cr store.
It never talks to members and changes nothing. With --repo it also reads the
source branch for commit times, member labels and explain traces.

It binds to 127.0.0.1 unless told otherwise, and then answers only requests
addressed to localhost, 127.0.0.1 or [::1] (a page on another name that
resolves to this host is refused). On any other address it requires a
bearer token (--token-file or $` + dashboardTokenEnv + `). Behind an
authenticating proxy on the same host that sends Host: localhost,
--user-header X-Forwarded-User refuses requests the proxy did not mark.`,
		Example: `  propagit dashboard --repo https://git.example.com/fleet.git
  propagit dashboard --works-store cr --hub-kubeconfig hub.kubeconfig --repo https://git.example.com/fleet.git
  propagit dashboard --repo https://git.example.com/fleet.git --addr :8080 --token-file /etc/propagit/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	o.repo.bindFlags(cmd, "repo", "the fleet repository: its work branch (git store) and source branch")
	f.StringVar(&o.branch, "branch", "main", "source branch the controller follows")
	f.StringVar(&o.path, "path", "", "folder inside the repository holding the fleet (default: the root)")
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
		return &ExitError{Code: 2, Err: fmt.Errorf("--repo is required with the git store")}
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

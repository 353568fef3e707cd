package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/crstore"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// The shared harness's settings (see e2etest), as this package names them.
const (
	branch    = e2etest.Branch
	fleetDir  = e2etest.FleetDir
	pollEvery = e2etest.PollEvery
	converge  = e2etest.Converge
)

// eventually polls cond every pollEvery until it holds, and fails the test
// with cond's last message when it does not within timeout. It returns how
// long the wait took.
func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return e2etest.Eventually(t, timeout, pollEvery, cond)
}

// eventuallyEvery is eventually polling every interval.
func eventuallyEvery(t testing.TB, timeout, interval time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return e2etest.Eventually(t, timeout, interval, cond)
}

// newCheckout creates an empty working copy on branch main whose origin is
// r; a test pushes its commits as a person would.
func newCheckout(t testing.TB, r *e2etest.Remote) *e2etest.Checkout {
	t.Helper()
	return e2etest.NewCheckout(t, r.URL, branch, r.Auth)
}

// setup is what a controller is started with; a restarted controller is
// given the same setup.
type setup struct {
	URL  string
	Auth transport.AuthMethod
	// KubeconfigDir holds <cluster>.kubeconfig for every member.
	KubeconfigDir string
	// SourceCache and WorksCache keep the clones between restarts.
	SourceCache string
	WorksCache  string
	// Hub, when set, keeps the Works as Work custom resources in
	// HubNamespace instead of a Git work branch, and holds the Secrets the
	// Clusters' spec.secretRef name.
	Hub          client.Client
	HubNamespace string
}

// newSetup points a controller at r and at members, whose credentials are
// kubeconfig files.
func newSetup(t testing.TB, r *e2etest.Remote, members ...*testenv.Member) setup {
	t.Helper()
	cache := t.TempDir()
	return setup{
		URL:           r.URL,
		Auth:          r.Auth,
		KubeconfigDir: e2etest.KubeconfigDir(t, members...),
		SourceCache:   filepath.Join(cache, "source"),
		WorksCache:    filepath.Join(cache, "works"),
	}
}

// controllerOptions are the controller's defaults with the waits shortened
// for tests.
func controllerOptions() controller.Options { return e2etest.ControllerOptions("e2e") }

// countingFetcher is the controller's Git fetcher, counting the fetches
// that completed so a test can wait for whole reconcile passes.
type countingFetcher struct {
	inner controller.Fetcher
	done  atomic.Int64
}

func (a *countingFetcher) ReadRevision(ctx context.Context, rev string) (controller.Snapshot, error) {
	return a.inner.ReadRevision(ctx, rev)
}

func (a *countingFetcher) Fetch(ctx context.Context) (controller.Snapshot, error) {
	defer a.done.Add(1)
	return a.inner.Fetch(ctx)
}

// running is a controller running in-process.
type running struct {
	*controller.Controller
	t       testing.TB
	fetcher *countingFetcher
	logs    *logRecorder
	loop    *e2etest.Loop
}

// startController builds a controller from s with fresh source and work
// store instances (over s's cache folders, as a restarted process would
// have) and runs it until stop or the end of the test.
func startController(t testing.TB, s setup) *running {
	t.Helper()
	return startControllerOpts(t, s, controllerOptions())
}

// startControllerOpts is startController with the given options.
func startControllerOpts(t testing.TB, s setup, opts controller.Options) *running {
	t.Helper()
	// The order is the CLI's: the follower, then the work store (both
	// register go-git's file:// transport; see the report in e2e notes).
	follower := source.NewFollower(source.FollowOptions{URL: s.URL, Branch: branch, Path: fleetDir, Auth: s.Auth, CacheDir: s.SourceCache})
	var ws works.Store
	var ss works.StatusStore
	if s.Hub != nil {
		cr := crstore.New(s.Hub, s.HubNamespace)
		ws, ss = cr, cr
	} else {
		store, err := gitstore.New(gitstore.Options{URL: s.URL, Auth: s.Auth, CacheDir: s.WorksCache})
		if err != nil {
			t.Fatalf("failed to create the work store: %v", err)
		}
		ws, ss = store, store
	}
	creds := &cluster.Credentials{KubeconfigDir: s.KubeconfigDir, QPS: 100, Burst: 200}
	if s.Hub != nil {
		creds.Hub = s.Hub
	}
	logs := newLogRecorder(t)
	fetcher := &countingFetcher{inner: controller.GitFetcher(follower)}
	c := controller.New(opts, fetcher, ws, ss, creds, logs.logger())
	r := &running{Controller: c, t: t, fetcher: fetcher, logs: logs}
	r.loop = e2etest.StartLoop(t, "controller", e2etest.StopTimeout, c.Run)
	t.Cleanup(r.stop) // runs before the loop's own cleanup
	return r
}

// stop cancels the controller and waits for Run to return; later calls do
// nothing.
func (r *running) stop() {
	r.t.Helper()
	r.loop.Stop()
	r.logs.close()
}

// fetches returns how many fetches have completed.
func (r *running) fetches() int64 { return r.fetcher.done.Load() }

// waitPasses waits until n whole reconcile passes have started and ended
// after the call: the loop is sequential, so once n+1 more fetches have
// completed, the n passes after the one in flight are over.
func (r *running) waitPasses(n int64) {
	r.t.Helper()
	from := r.fetches()
	eventually(r.t, converge, func() (bool, string) {
		got := r.fetches() - from
		return got >= n+1, fmt.Sprintf("%d of %d fetches completed; state %+v", got, n+1, r.State())
	})
}

// waitRevision waits until the controller has the revision rev in force.
func (r *running) waitRevision(rev string) {
	r.t.Helper()
	e2etest.WaitRevision(r.t, r.Controller, rev)
}

// statusReader reads the Works and their status the controller wrote,
// through its own store instance, as `propagit status` would.
type statusReader struct {
	t     testing.TB
	store works.Store
	state works.StatusStore
}

// newStatusReader reads the Git work branch and status refs of r.
func newStatusReader(t testing.TB, r *e2etest.Remote) *statusReader {
	t.Helper()
	store, err := gitstore.New(gitstore.Options{URL: r.URL, Auth: r.Auth})
	if err != nil {
		t.Fatalf("failed to create a status reader: %v", err)
	}
	return &statusReader{t: t, store: store, state: store}
}

// get returns the stored status of cluster.
func (s *statusReader) get(cluster string) (*workv1alpha1.WorkStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.state.GetStatus(ctx, cluster)
}

// works returns the stored Works.
func (s *statusReader) works() ([]*workv1alpha1.Work, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.store.List(ctx)
}

// waitApplied waits until every cluster's stored status says rev was
// applied, and returns the last statuses read.
func (s *statusReader) waitApplied(rev string, clusters ...string) map[string]*workv1alpha1.WorkStatus {
	s.t.Helper()
	out := map[string]*workv1alpha1.WorkStatus{}
	eventually(s.t, converge, func() (bool, string) {
		for _, c := range clusters {
			st, err := s.get(c)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", c, err)
			}
			if st.AppliedRevision != rev {
				return false, fmt.Sprintf("%s: applied %q, want %s; %s", c, st.AppliedRevision, rev, e2etest.DescribeStatus(st))
			}
			out[c] = st
		}
		return true, ""
	})
	return out
}

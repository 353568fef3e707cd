package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/transport"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/crstore"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// The shared harness's settings (see e2etest), as this package names them.
const (
	branch      = e2etest.Branch
	fleetDir    = e2etest.FleetDir
	pollEvery   = e2etest.PollEvery
	converge    = e2etest.Converge
	stopTimeout = e2etest.StopTimeout
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

// gitRemote is the bare repository the controller follows.
type gitRemote struct {
	// URL is what the controller and the checkout are given; it may carry
	// credentials.
	URL string
	// Auth authenticates to URL; nil for none.
	Auth transport.AuthMethod
	// Dir is the bare repository on disk.
	Dir string
	// Server serves Dir over smart HTTP; nil for a file:// remote.
	Server *gitserver.Server
}

// httpRemote creates a bare repository served over smart HTTP by git
// http-backend; the server stops when the test ends.
func httpRemote(t testing.TB) *gitRemote {
	t.Helper()
	root := t.TempDir()
	srv, err := gitserver.New(root, gitserver.Options{})
	if err != nil {
		t.Fatalf("failed to start the git server: %v", err)
	}
	t.Cleanup(srv.Close)
	url, err := srv.InitBare("fleet.git")
	if err != nil {
		t.Fatal(err)
	}
	return &gitRemote{URL: url, Dir: filepath.Join(root, "fleet.git"), Server: srv}
}

// fileRemote creates a bare repository reached through a file:// URL.
func fileRemote(t testing.TB) *gitRemote {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fleet.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatalf("failed to create bare repository: %v", err)
	}
	return &gitRemote{URL: "file://" + dir, Dir: dir}
}

// checkout is a working copy whose commits a test pushes to the remote, as
// a person would.
type checkout struct {
	*e2etest.Checkout
	t testing.TB
}

// newCheckout creates an empty working copy on branch main whose origin is
// r.
func newCheckout(t testing.TB, r *gitRemote) *checkout {
	t.Helper()
	return &checkout{Checkout: e2etest.NewCheckout(t, r.URL, branch, r.Auth), t: t}
}

// write writes a file, path relative to the repository root.
func (c *checkout) write(path, content string) {
	c.t.Helper()
	c.Write(path, content)
}

// read returns a file's content, path relative to the repository root.
func (c *checkout) read(path string) string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, filepath.FromSlash(path)))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(data)
}

// edit replaces exactly one occurrence of old in a file.
func (c *checkout) edit(path, old, new string) {
	c.t.Helper()
	content := c.read(path)
	if n := strings.Count(content, old); n != 1 {
		c.t.Fatalf("%s: want exactly one %q, found %d", path, old, n)
	}
	c.write(path, strings.Replace(content, old, new, 1))
}

// remove deletes a file or folder, path relative to the repository root.
func (c *checkout) remove(path string) {
	c.t.Helper()
	if err := os.RemoveAll(filepath.Join(c.Dir, filepath.FromSlash(path))); err != nil {
		c.t.Fatal(err)
	}
}

// copyDir copies the files under src (on disk) to dst in the checkout.
func (c *checkout) copyDir(src, dst string) {
	c.t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.write(filepath.ToSlash(filepath.Join(dst, rel)), string(data))
		return nil
	})
	if err != nil {
		c.t.Fatalf("failed to copy %s: %v", src, err)
	}
}

// commit records every change and returns the commit hash.
func (c *checkout) commit(msg string) string {
	c.t.Helper()
	return c.Commit(msg)
}

// push pushes main to origin.
func (c *checkout) push() {
	c.t.Helper()
	c.Push("")
}

// commitPush commits every change, pushes it, and returns the commit and
// when the push completed.
func (c *checkout) commitPush(msg string) (string, time.Time) {
	c.t.Helper()
	return c.CommitPush(msg), time.Now()
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
func newSetup(t testing.TB, r *gitRemote, members ...*testenv.Member) setup {
	t.Helper()
	cache := t.TempDir()
	return setup{
		URL:           r.URL,
		Auth:          r.Auth,
		KubeconfigDir: kubeconfigDir(t, members...),
		SourceCache:   filepath.Join(cache, "source"),
		WorksCache:    filepath.Join(cache, "works"),
	}
}

// kubeconfigDir copies each member's kubeconfig to <dir>/<name>.kubeconfig,
// the layout of --kubeconfig-dir.
func kubeconfigDir(t testing.TB, members ...*testenv.Member) string {
	return e2etest.KubeconfigDir(t, members...)
}

// controllerOptions are the controller's defaults with the waits shortened
// for tests.
func controllerOptions() controller.Options {
	opts := controller.DefaultOptions()
	opts.Interval = time.Second
	opts.ProbeTimeout = 5 * time.Second
	opts.ProbeInterval = time.Second
	opts.Deliver.RetryMin = 250 * time.Millisecond
	opts.Deliver.RetryMax = 2 * time.Second
	opts.Deliver.HealthInterval = time.Second
	opts.Deliver.Version = "e2e"
	return opts
}

// countingFetcher is the controller's Git fetcher, counting the fetches
// that completed so a test can wait for whole reconcile passes.
type countingFetcher struct {
	inner controller.Fetcher
	done  atomic.Int64
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
	r.loop = e2etest.StartLoop(t, "controller", stopTimeout, c.Run)
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
	eventually(r.t, converge, func() (bool, string) {
		st := r.State()
		return st.Revision == rev && st.SourceError == "", fmt.Sprintf("want revision %s, state %+v", rev, st)
	})
}

// statusReader reads the Works and their status the controller wrote,
// through its own store instance, as `propagit status` would.
type statusReader struct {
	t     testing.TB
	store works.Store
	state works.StatusStore
}

// newStatusReader reads the Git work branch and status refs of r.
func newStatusReader(t testing.TB, r *gitRemote) *statusReader {
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
				return false, fmt.Sprintf("%s: applied %q, want %s; %s", c, st.AppliedRevision, rev, describeStatus(st))
			}
			out[c] = st
		}
		return true, ""
	})
	return out
}

// condition returns the condition typ of st, nil when absent.
func condition(st *workv1alpha1.WorkStatus, typ string) *metav1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// describeStatus renders the parts of a status a failing wait should show.
func describeStatus(st *workv1alpha1.WorkStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied=%q", st.AppliedRevision)
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(&b, " inventory=%d", len(st.Inventory))
	return b.String()
}

// short returns the first 12 characters of a revision.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

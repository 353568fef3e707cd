package pull

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// The shared harness's settings (see e2etest), as this package names them.
const (
	sourceBranch = e2etest.Branch
	fleetPath    = e2etest.FleetDir
	pollEvery    = e2etest.PollEvery
	converge     = e2etest.Converge
	// agentVersion is the version the test agents write into status.
	agentVersion = "pull-e2e"
)

func TestMain(m *testing.M) {
	e2etest.ExitIfShort()
	// controller-runtime prints a stack trace after 30 s without a logger;
	// the controller and agents log through testLogger instead.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// eventually polls cond every pollEvery until it holds and fails the test
// with cond's last message when it does not within timeout. It returns how
// long the wait took.
func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return e2etest.Eventually(t, timeout, pollEvery, cond)
}

// kubeCtx bounds one call to a member or hub.
var kubeCtx = e2etest.KubeCtx

// randomName returns prefix-xxxxxx, a name no other test uses.
func randomName(prefix string) string { return e2etest.RandomName(prefix) }

// testLogger returns a logger writing to the test log, tagged with name,
// until the test's cleanup has stopped whatever uses it. Register it before
// starting the goroutine that logs, so its cleanup runs after that
// goroutine's.
func testLogger(t testing.TB, name string) logr.Logger {
	var closed atomic.Bool
	t.Cleanup(func() { closed.Store(true) })
	return funcr.New(func(prefix, args string) {
		if !closed.Load() {
			t.Log(name + ": " + prefix + " " + args)
		}
	}, funcr.Options{})
}

// statusMessage returns the commit message at the tip of cluster's status
// ref in the bare repository dir, read straight from disk, as `git log
// refs/propagit/status/<cluster>` would show it.
func statusMessage(dir, cluster string) (string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return "", err
	}
	ref, err := repo.Reference(gitstore.StatusRef(cluster), true)
	if err != nil {
		return "", fmt.Errorf("%s: %w", gitstore.StatusRef(cluster), err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return "", err
	}
	return c.Message, nil
}

// fleet is a working copy of the fleet repository whose commits a test
// pushes as a person would; files go under fleetPath.
type fleet struct {
	*e2etest.Checkout
	t testing.TB
}

// newFleet creates an empty working copy on sourceBranch with origin url.
func newFleet(t testing.TB, url string) *fleet {
	t.Helper()
	return &fleet{Checkout: e2etest.NewCheckout(t, url, sourceBranch, nil), t: t}
}

// write writes a file under the fleet folder.
func (f *fleet) write(path, content string) {
	f.t.Helper()
	f.Write(fleetPath+"/"+path, content)
}

// configMapYAML is ConfigMap ns/name, labelled app: name, with one data
// key, "value".
func configMapYAML(ns, name, value string) string {
	return e2etest.ConfigMapYAML(ns, name, value, "app", name)
}

// policyYAML sends every ConfigMap of ns to clusters (Duplicated: each
// gets the whole template).
func policyYAML(ns string, clusters ...string) string {
	return e2etest.Policy{Namespace: ns, Clusters: clusters, Scheduling: "Duplicated"}.YAML()
}

// overrideYAML sets path of one template (apiVersion, kind, ns/name) to a
// different value on each cluster: one plaintext replace rule per cluster.
// values are YAML scalars as written ("3", "\"text\"").
func overrideYAML(apiVersion, kind, ns, name, path string, clusters, values []string) string {
	var rules strings.Builder
	for i, c := range clusters {
		fmt.Fprintf(&rules, `  - targetCluster:
      clusterNames:
      - %s
    overriders:
      plaintext:
      - path: %s
        operator: replace
        value: %s
`, c, path, values[i])
	}
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: %s-%s-per-cluster
  namespace: %s
spec:
  resourceSelectors:
  - apiVersion: %s
    kind: %s
    name: %s
  overrideRules:
%s`, strings.ToLower(kind), name, ns, apiVersion, kind, name, rules.String())
}

// configMapOverrideYAML gives ConfigMap ns/name's data.value a different
// value on each cluster.
func configMapOverrideYAML(ns, name string, clusters, values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return overrideYAML("v1", "ConfigMap", ns, name, "/data/value", clusters, quoted)
}

// hubSetup is what the in-process controller is built from.
type hubSetup struct {
	// SourceURL is the fleet repository the controller follows, with Auth
	// (nil: none).
	SourceURL string
	Auth      transport.AuthMethod
	Works     works.Store
	Status    works.StatusStore
	// Push are the members the controller applies to. Pull members are
	// left out: the hub holds no credentials for them.
	Push    []*testenv.Member
	Options controller.Options
}

// controllerOptions are the controller's defaults with short waits.
func controllerOptions() controller.Options { return e2etest.ControllerOptions("controller-e2e") }

// deliverOptions are the syncer's defaults with short retries.
func deliverOptions() deliver.Options { return e2etest.DeliverOptions(agentVersion) }

// startLoop runs a component's Run until stopped or the end of the test.
func startLoop(t testing.TB, what string, run func(context.Context) error) *e2etest.Loop {
	return e2etest.StartLoop(t, what, e2etest.StopTimeout, run)
}

// runningController is a controller running in-process.
type runningController struct {
	*controller.Controller
	*e2etest.Loop
}

// startController runs a controller built from s until the test ends.
func startController(t testing.TB, s hubSetup) *runningController {
	t.Helper()
	follower := source.NewFollower(source.FollowOptions{URL: s.SourceURL, Branch: sourceBranch, Path: fleetPath, Auth: s.Auth})
	creds := &cluster.Credentials{KubeconfigDir: e2etest.KubeconfigDir(t, s.Push...), QPS: 100, Burst: 200}
	log := testLogger(t, "controller")
	c := controller.New(s.Options, controller.GitFetcher(follower), s.Works, s.Status, creds, log)
	return &runningController{Controller: c, Loop: startLoop(t, "controller", c.Run)}
}

// waitRevision waits until the controller has rev in force.
func (c *runningController) waitRevision(t testing.TB, rev string) {
	t.Helper()
	e2etest.WaitRevision(t, c.Controller, rev)
}

// agentOptions are the agent's defaults with a short poll.
func agentOptions(cluster string) agent.Options {
	opts := agent.DefaultOptions()
	opts.Cluster = cluster
	opts.Interval = 500 * time.Millisecond
	opts.ProbeInterval = time.Second
	opts.Deliver = deliverOptions()
	return opts
}

// newAgent builds an agent that logs to the test log.
func newAgent(t testing.TB, opts agent.Options, src agent.Source, status works.StatusStore, member *rest.Config) *agent.Agent {
	return agent.New(opts, src, status, member, testLogger(t, "agent "+opts.Cluster))
}

// newGitStore returns a store for url, failing the test on error.
func newGitStore(t testing.TB, opts gitstore.Options) *gitstore.Store {
	t.Helper()
	s, err := gitstore.New(opts)
	if err != nil {
		t.Fatalf("failed to create a git store: %v", err)
	}
	return s
}

// waitStatus polls store for cluster's status until ok holds, and returns
// the status that satisfied it.
func waitStatus(t testing.TB, store works.StatusStore, cluster string, what string, ok func(*workv1alpha1.WorkStatus) bool) *workv1alpha1.WorkStatus {
	t.Helper()
	var got *workv1alpha1.WorkStatus
	eventually(t, converge, func() (bool, string) {
		ctx, cancel := kubeCtx()
		defer cancel()
		st, err := store.GetStatus(ctx, cluster)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", cluster, err)
		}
		got = st
		return ok(st), fmt.Sprintf("%s: want %s; status %s", cluster, what, e2etest.DescribeStatus(st))
	})
	return got
}

// appliedReady is a waitStatus condition: rev applied and Ready.
func appliedReady(rev string) func(*workv1alpha1.WorkStatus) bool {
	return func(st *workv1alpha1.WorkStatus) bool { return st.AppliedRevision == rev && e2etest.IsReady(st) }
}

// statusRecorder is the one status store the tests watch: it remembers
// every status written through it, in order.
type statusRecorder struct {
	works.StatusStore
	mu     sync.Mutex
	writes []*workv1alpha1.WorkStatus
}

func (r *statusRecorder) PutStatus(ctx context.Context, cluster string, st *workv1alpha1.WorkStatus) error {
	r.mu.Lock()
	r.writes = append(r.writes, st.DeepCopy())
	r.mu.Unlock()
	return r.StatusStore.PutStatus(ctx, cluster, st)
}

// last returns the last status handed to the store (written or not).
func (r *statusRecorder) last() *workv1alpha1.WorkStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.writes) == 0 {
		return nil
	}
	return r.writes[len(r.writes)-1]
}

package sync

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// The shared harness's settings (see e2etest), as this package names them.
const (
	branch    = e2etest.Branch
	fleetDir  = e2etest.FleetDir
	pollEvery = e2etest.PollEvery
	converge  = e2etest.Converge
	secret    = "e2e-webhook-secret"
)

// binary is the propagit binary built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	e2etest.ExitIfShort()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "propagit-sync-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = e2etest.BuildPropagit(dir); err != nil {
		fmt.Fprintf(os.Stderr, "failed to build propagit: %v\n", err)
		return 1
	}
	return m.Run()
}

// eventually polls cond until it holds and fails the test with cond's last
// message when it does not within timeout; it returns how long it took.
func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return e2etest.Eventually(t, timeout, pollEvery, cond)
}

// kubeCtx bounds one call to a member.
var kubeCtx = e2etest.KubeCtx

func randomNamespace(prefix string) string { return e2etest.RandomName(prefix) }

// --- Git -----------------------------------------------------------------

// checkout is a working copy pushing to a bare repository over smart HTTP:
// git http-backend takes the test's pushes and the controllers' Work and
// status pushes to the same repository under git's own locking (a file://
// push from go-git, racing a controller's write, could fail with "missing
// necessary objects").
type checkout struct {
	*e2etest.Checkout
	url string
}

func newRemoteAndCheckout(t testing.TB) *checkout {
	t.Helper()
	r := e2etest.HTTPRemote(t)
	return &checkout{Checkout: e2etest.NewCheckout(t, r.URL, branch, nil), url: r.URL}
}

// configMapFleet writes e2etest's ConfigMap fleet for ns and the clusters,
// and the ConfigMap settings with value.
func (c *checkout) configMapFleet(ns, value string, clusters ...string) {
	c.ConfigMapFleet(ns, clusters...)
	c.setValue(ns, value)
}

// setValue rewrites the ConfigMap settings with value.
func (c *checkout) setValue(ns, value string) {
	c.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "settings", value))
}

// --- members -------------------------------------------------------------

// memberValue returns the value of ConfigMap ns/settings on m, or a
// description of why there is none.
func memberValue(m *testenv.Member, ns string) (string, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	cm, err := m.Client().CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "<absent>", nil
	}
	if err != nil {
		return "", err
	}
	return cm.Data["value"], nil
}

// waitValue waits until every member has value in ns/settings and returns
// how long it took.
func waitValue(t testing.TB, ns, value string, members ...*testenv.Member) time.Duration {
	t.Helper()
	return eventually(t, converge, func() (bool, string) {
		var state []string
		ok := true
		for _, m := range members {
			got, err := memberValue(m, ns)
			if err != nil {
				got = err.Error()
			}
			if got != value {
				ok = false
			}
			state = append(state, m.Name+"="+got)
		}
		return ok, fmt.Sprintf("want %q: %s", value, strings.Join(state, " "))
	})
}

// --- the controller process ------------------------------------------------

// proc is a running `propagit controller`.
type proc struct {
	t        testing.TB
	cmd      *exec.Cmd
	HTTPAddr string
	LogPath  string
	done     chan struct{}
}

// startController runs the binary with the common flags plus extra; it is
// killed (with its process group) when the test ends.
func startController(t testing.TB, repoURL, kcDir string, extra ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "github-secret")
	if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, HTTPAddr: e2etest.FreeAddr(t), LogPath: filepath.Join(dir, "controller.log"), done: make(chan struct{})}
	args := []string{"controller",
		"--repo", repoURL, "--branch", branch, "--path", fleetDir,
		"--kubeconfig-dir", kcDir,
		"--interval", "1h",
		"--http-addr", p.HTTPAddr,
		"--health-addr", e2etest.FreeAddr(t),
		"--webhook-github-secret-file", secretFile,
		"--cluster-failure-threshold", "2s",
		"--log-format", "console",
		"--cache-dir", filepath.Join(dir, "cache"),
	}
	args = append(args, extra...)
	logf, err := os.Create(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("controller pid %d: tail of its log:\n%s", p.cmd.Process.Pid, e2etest.FileTail(p.LogPath, 60))
		}
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("controller exited early: %v", p.cmd.ProcessState)
		default:
		}
		resp, err := http.Get("http://" + p.HTTPAddr + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// kill sends SIGKILL to the process group and waits for the process.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Errorf("controller pid %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// postPush posts a GitHub push event for main to /hooks/git, signed with
// key, and returns the status code.
func (p *proc) postPush(key string) int {
	p.t.Helper()
	code, _ := e2etest.PostGitHubPush(p.t, "http://"+p.HTTPAddr+"/hooks/git", key, []byte(`{"ref":"refs/heads/main"}`))
	return code
}

// scrape returns the metric families the controller serves.
func (p *proc) scrape() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + p.HTTPAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// metricValue returns the value of the series of name whose labels include
// labels, and whether it exists. For a histogram it is the sample count.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// webhookCount returns propagit_webhook_requests_total for github and result.
func (p *proc) webhookCount(result string) float64 {
	p.t.Helper()
	fams, err := p.scrape()
	if err != nil {
		p.t.Fatalf("failed to scrape /metrics: %v", err)
	}
	v, _ := metricValue(fams, "propagit_webhook_requests_total", map[string]string{"provider": "github", "result": result})
	return v
}

func percentile(ds []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*q+0.5)]
}

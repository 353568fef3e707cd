package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// scriptBomb is a ResourceInterpreterCustomization for ConfigMaps whose
// GetReplicas runs body: render calls it for every ConfigMap.
func scriptBomb(name, body string) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: %s}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
%s
        end
`, name, indentScript(body, "          "))
}

func indentScript(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// scriptBombs are the bombs that took down the controller, lint and render
// before scripts ran in killable workers: a returned table of 2^60 leaves
// (shared subtables), a string doubled by concatenation, and a pattern
// that backtracks for minutes.
var scriptBombs = []struct{ name, file, body string }{
	{"dag", "bombs/dag.yaml", "local t = {'leaf'}\nfor i = 1, 60 do t = {t, t} end\nreturn 1, t"},
	{"concat", "bombs/concat.yaml", "local s = string.rep('x', 1048576)\nfor i = 1, 40 do s = s .. s .. s end\nreturn #s"},
	{"pattern", "bombs/pattern.yaml", "return string.rep('a', 5000):find(('.-'):rep(8) .. 'b') or 0"},
}

// TestHostileScriptBombKeepsControllerAlive runs the real `propagit
// controller` binary (the 1 GiB container's memory limit set) against a
// real member, then commits each script bomb in turn. Each is reported as
// a render error naming its file and a budget stop, stays the tip for
// 10 s of re-renders, the member keeps the previous revision's ConfigMap,
// the controller process never exits nor passes 512 MiB resident, and
// /healthz keeps answering; a good commit afterwards is applied.
func TestHostileScriptBombKeepsControllerAlive(t *testing.T) {
	bin, err := propagitBinary()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{Members: 1})
	m1 := env.Members[0]
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	good := goodScriptFleet()
	for file, content := range good {
		co.Write(fleetDir+"/"+file, content)
	}
	co.CommitPush("app v1")

	health := e2etest.FreeAddr(t)
	ctrl := startBinaryController(t, bin, "--repo", remote.URL, "--branch", branch, "--path", fleetDir,
		"--kubeconfig-dir", e2etest.KubeconfigDir(t, m1), "--cache-dir", t.TempDir(), "--interval", "1s",
		"--health-addr", health, "--http-addr", "")
	waitAppConfigMap(t, m1, "v1")
	probe := probeHealth(t, health)

	for _, b := range scriptBombs {
		co.Write(fleetDir+"/"+b.file, scriptBomb(b.name, b.body))
		co.Edit(fleetDir+"/app/cm.yaml", `"v1"`, `"bad"`)
		bad, pushed := co.CommitPush("script bomb "+b.name), time.Now()
		eventually(t, converge, func() (bool, string) {
			return strings.Contains(ctrl.line(b.file+":"), "stopped") || ctrl.exited(),
				fmt.Sprintf("no render error naming %s and a budget stop for %s", b.file, e2etest.Short(bad))
		})
		if ctrl.exited() {
			t.Fatalf("%s: the controller exited: %v", b.name, ctrl.state())
		}
		t.Logf("%s: render error logged %s after the push: %s", b.name, time.Since(pushed).Round(time.Millisecond), ctrl.line(b.file+":"))
		// The bomb stays the tip while the controller re-renders it every
		// second: an abandoned call that kept running (what killed the
		// controller 8 s after such a commit) would pile up here.
		ctrl.holdFor(t, 10*time.Second)
		if rss, err := peakRSS(ctrl.cmd.Process.Pid); err == nil && rss > scriptControllerRSS {
			t.Errorf("%s: controller peak RSS %d MiB, want at most %d MiB", b.name, rss>>20, scriptControllerRSS>>20)
		}
		if cm, err := getConfigMap(m1, "shop", "app"); err != nil || cm == nil || cm.Data["value"] != "v1" {
			t.Errorf("%s: the member's ConfigMap is %v (%v), want the previous revision's v1", b.name, cm, err)
		}
		co.Remove(fleetDir + "/" + b.file)
		co.Edit(fleetDir+"/app/cm.yaml", `"bad"`, `"v1"`)
	}
	co.Edit(fleetDir+"/app/cm.yaml", `"v1"`, `"v2"`)
	co.CommitPush("app v2")
	waitAppConfigMap(t, m1, "v2")
	if ctrl.exited() {
		t.Fatalf("the controller exited: %v", ctrl.state())
	}
	probe.check(t)
	rss, _ := peakRSS(ctrl.cmd.Process.Pid)
	t.Logf("controller peak RSS %d MiB; %d live script workers", rss>>20, len(childProcesses(ctrl.cmd.Process.Pid)))
}

// goodScriptFleet is a fleet sending ConfigMap shop/app (value v1) to
// member1.
func goodScriptFleet() map[string]string {
	return map[string]string{"cluster.yaml": hostileCluster, "policy.yaml": hostilePolicy, "ns.yaml": hostileNamespace,
		"app/cm.yaml": hostileConfigMap("ConfigMap", "app", "v1")}
}

// TestHostileScriptBombFailsLintAndDiff runs the real binary's `lint` and
// `diff` (what CI runs on a pull request) on a fleet holding each script
// bomb and nine ConfigMaps it runs on: each exits non-zero with a budget
// stop naming the bomb's file, the Go runtime never dies (no "fatal
// error", no goroutine dump), the CLI stays under 256 MiB resident and
// each script worker under its cap. Before scripts ran in
// killable workers, each abandoned call kept allocating: lint on the DAG
// bomb with seven ConfigMaps peaked at 626 MiB, growing with each one.
func TestHostileScriptBombFailsLintAndDiff(t *testing.T) {
	bin, err := propagitBinary()
	if err != nil {
		t.Fatal(err)
	}
	good := goodScriptFleet()
	for _, b := range scriptBombs {
		base, head := t.TempDir(), t.TempDir()
		for file, content := range good {
			writeScriptFleetFile(t, filepath.Join(base, file), content)
			writeScriptFleetFile(t, filepath.Join(head, file), content)
		}
		writeScriptFleetFile(t, filepath.Join(head, b.file), scriptBomb(b.name, b.body))
		for i := range 8 {
			writeScriptFleetFile(t, filepath.Join(head, fmt.Sprintf("app/extra-%d.yaml", i)), hostileConfigMap("ConfigMap", fmt.Sprintf("extra-%d", i), "x"))
		}
		for _, args := range [][]string{{"lint", "--source", head}, {"diff", "--base-dir", base, "--head-dir", head}} {
			code, out, took, rss, workers := runPropagitBinary(t, bin, args...)
			t.Logf("%s %s: exit %d after %s, peak RSS %d MiB, script workers' %d MiB", args[0], b.name, code, took.Round(time.Millisecond), rss>>20, workers>>20)
			if rss > scriptRunRSS || workers > scriptWorkerRSS {
				t.Errorf("%s with the %s bomb: peak RSS %d MiB, workers' %d MiB; want at most %d and %d MiB", args[0], b.name,
					rss>>20, workers>>20, scriptRunRSS>>20, scriptWorkerRSS>>20)
			}
			if code == 0 || strings.Contains(out, "fatal error") || strings.Contains(out, "goroutine ") {
				t.Errorf("%s with the %s bomb: exit %d, want a non-zero exit with a budget error; output:\n%s", args[0], b.name, code, out)
			}
			if !strings.Contains(out, b.file+":") || !strings.Contains(out, "stopped") {
				t.Errorf("%s with the %s bomb: the output names no budget stop in %s:\n%s", args[0], b.name, b.file, out)
			}
		}
	}
}

// scriptControllerRSS bounds the controller of the one-ConfigMap fleet
// while script bombs are committed (85 MiB measured; the scripts' memory
// is their workers').
const scriptControllerRSS = 512 << 20

// holdFor asserts that the controller keeps running for d.
func (c *binaryController) holdFor(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case <-c.done:
			t.Fatalf("the controller exited: %v", c.state())
		case <-deadline:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// binaryController is a `propagit controller` process.
type binaryController struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

func startBinaryController(t *testing.T, bin string, args ...string) *binaryController {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &binaryController{cmd: exec.CommandContext(ctx, bin, append([]string{"controller"}, args...)...),
		logs: &lockedBuffer{}, done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), fmt.Sprintf("GOMEMLIMIT=%d", memoryBudget*9/10))
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-c.done
		if t.Failed() {
			t.Logf("controller log:\n%s", c.logs.String())
		}
	})
	return c
}

func (c *binaryController) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *binaryController) state() string {
	if !c.exited() {
		return "running"
	}
	return c.cmd.ProcessState.String()
}

// line is the first log line holding sub.
func (c *binaryController) line(sub string) string {
	for l := range strings.SplitSeq(c.logs.String(), "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func waitAppConfigMap(t *testing.T, m *testenv.Member, value string) {
	t.Helper()
	eventually(t, converge, func() (bool, string) {
		cm, err := getConfigMap(m, "shop", "app")
		return err == nil && cm != nil && cm.Data["value"] == value, fmt.Sprintf("ConfigMap shop/app: %v, %v, want %s", cm, err, value)
	})
}

// healthProbe probes /healthz five times a second, a kubelet's way (1 s
// timeout), until the test ends.
type healthProbe struct {
	probes, failures atomic.Int64
	last             atomic.Value
	stop             context.CancelFunc
	done             chan struct{}
}

func probeHealth(t *testing.T, addr string) *healthProbe {
	ctx, stop := context.WithCancel(context.Background())
	p := &healthProbe{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		client := &http.Client{Timeout: time.Second}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			resp, err := client.Get("http://" + addr + "/healthz")
			p.probes.Add(1)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					continue
				}
				err = errors.New(resp.Status)
			}
			p.failures.Add(1)
			p.last.Store(err.Error())
		}
	}()
	t.Cleanup(func() { stop(); <-p.done })
	return p
}

// check asserts that at most one probe in ten failed (a loaded CI machine
// misses some; a dead controller misses all).
func (p *healthProbe) check(t *testing.T) {
	t.Helper()
	n, all := p.failures.Load(), p.probes.Load()
	t.Logf("%d /healthz probes, %d failed", all, n)
	if all == 0 || n*10 > all {
		t.Errorf("%d of %d /healthz probes failed, last: %v", n, all, p.last.Load())
	}
}

// childProcesses lists the processes whose parent is pid.
func childProcesses(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(pid) {
				out = append(out, child)
			}
		}
	}
	return out
}

func writeScriptFleetFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scriptRunRSS bounds the resident size of a lint or diff process itself:
// its scripts' memory is their workers' (before workers, lint on the DAG
// bomb with seven ConfigMaps peaked at 626 MiB). scriptWorkerRSS bounds
// each worker: its address space is capped at its start plus 768 MiB.
const (
	scriptRunRSS    = 256 << 20
	scriptWorkerRSS = 800 << 20
)

// runPropagitBinary runs the propagit binary with a 2-minute deadline and
// returns its exit code (-1 when a signal ended it), its output, how long
// it took, its own peak resident size and the largest of its script
// workers'. The peak is each process's own high-water mark (VmHWM), read
// while it runs: the rusage of a reaped child would not do, since Linux
// starts a forked child's peak at its parent's, and this test process has
// grown by then.
func runPropagitBinary(t *testing.T, bin string, args ...string) (code int, output string, took time.Duration, rss, workers int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-tick.C:
			if r, perr := peakRSS(cmd.Process.Pid); perr == nil {
				rss = max(rss, r)
			}
			for _, pid := range childProcesses(cmd.Process.Pid) {
				if r, perr := peakRSS(pid); perr == nil {
					workers = max(workers, r)
				}
			}
		}
	}
	took = time.Since(start)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), took, rss, workers
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, out.String(), took, rss, workers
		}
		return ee.ExitCode(), out.String(), took, rss, workers
	}
	t.Fatalf("%s %v: %v", bin, args, err)
	return 0, "", took, rss, workers
}

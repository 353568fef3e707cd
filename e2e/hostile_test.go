package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/cli"
)

// hostileCluster and hostilePolicy send every ConfigMap of namespace shop
// to member1.
const (
	hostileCluster = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: member1\n"
	hostilePolicy  = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: config
  namespace: shop
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames: [member1]
`
	hostileNamespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
)

func hostileConfigMap(kind, name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n  namespace: shop\ndata:\n  value: %q\n", kind, name, value)
}

// runRender runs `propagit render` in-process, as the binary would, and
// returns its error.
func runRender(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCommand(&out, &errOut)
	cmd.SetArgs(append([]string{"render"}, args...))
	err := cmd.Execute()
	return errOut.String(), err
}

// filesUnder lists the regular files under dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestHostileRenderStaysInsideOut renders pull requests crafted to write
// outside --out, to collide on one file, and to make render delete a file:
// each one fails with a non-zero exit, names the file, and nothing is
// written anywhere but --out.
func TestHostileRenderStaysInsideOut(t *testing.T) {
	cases := map[string]string{
		"name climbing out":         hostileConfigMap("ConfigMap", "../../../../../../x", "pwned"),
		"namespace .git":            strings.Replace(hostileConfigMap("ConfigMap", "a", "pwned"), "namespace: shop", "namespace: .git", 1),
		"kind with a slash":         hostileConfigMap("a/../../../../../x", "a", "pwned"),
		"kinds differ only by case": hostileConfigMap("ConfigMap", "a", "one") + "---\n" + hostileConfigMap("configmap", "a", "two"),
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			src := filepath.Join(base, "pr", "fleet")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			for file, content := range map[string]string{"cluster.yaml": hostileCluster, "policy.yaml": hostilePolicy, "ns.yaml": hostileNamespace, "evil.yaml": doc} {
				if err := os.WriteFile(filepath.Join(src, file), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(base, "job", "a", "b", "out")
			stderr, err := runRender("--source", src, "--out", out)
			if err == nil {
				t.Fatalf("render succeeded; stderr:\n%s", stderr)
			}
			if !strings.Contains(err.Error(), "evil.yaml:") {
				t.Errorf("the error does not name the file: %v", err)
			}
			var written []string
			for _, f := range filesUnder(t, base) {
				if !strings.HasPrefix(f, src+string(filepath.Separator)) {
					written = append(written, f)
				}
			}
			if len(written) > 0 {
				t.Errorf("render wrote %v", written)
			}
		})
	}

	// A good source still renders; --out naming a file keeps the file.
	base := t.TempDir()
	src := filepath.Join(base, "fleet")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, content := range map[string]string{"cluster.yaml": hostileCluster, "policy.yaml": hostilePolicy, "ns.yaml": hostileNamespace, "cm.yaml": hostileConfigMap("ConfigMap", "a", "ok")} {
		if err := os.WriteFile(filepath.Join(src, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := filepath.Join(base, "notes.yaml")
	if err := os.WriteFile(notes, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runRender("--source", src, "--out", notes); err == nil {
		t.Error("render --out FILE succeeded")
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine\n" {
		t.Errorf("render --out FILE changed the file: %q, %v", b, err)
	}
	out := filepath.Join(base, "out")
	if stderr, err := runRender("--source", src, "--out", out); err != nil {
		t.Fatalf("good source: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "member1", "shop", "configmap.core_a.yaml")); err != nil {
		t.Errorf("good source: %v", err)
	}
}

// aliasBomb is a small document whose aliases expand to width^depth
// scalars.
func aliasBomb(name string, width, depth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: shop\nl0: &l0 x\n", name)
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "l%d: &l%d [", d, d)
		for i := range width {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", d-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// binaryDir is the folder propagitBinary built into; TestMain removes it.
var binaryDir string

// propagitBinary builds cmd/propagit once per test binary.
var propagitBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "propagit-e2e-bin-")
	if err != nil {
		return "", err
	}
	binaryDir = dir
	return e2etest.BuildPropagit(dir)
})

// lockedBuffer collects a process' output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// peakRSS reads the peak resident set size of a process, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// memoryBudget is the container limit the controller must live within.
const memoryBudget = 1 << 30

// TestHostileControllerKeepsLastGood runs the real `propagit controller`
// binary, with the Go memory limit a 1 GiB container gives it, against a
// real Git remote over smart HTTP and a real member. Three commits that
// used to take it down (an alias bomb inside a kustomization, sixty
// documents each just under the per-document node budget, a 200 MB file)
// are each refused with the file named in its log, while the previous
// revision stays applied on the member, /healthz keeps answering and the
// peak RSS stays under 1 GiB; a good commit afterwards is applied.
func TestHostileControllerKeepsLastGood(t *testing.T) {
	t.Parallel()
	bin, err := propagitBinary()
	if err != nil {
		t.Fatal(err)
	}
	m1 := sharedMembers(t, 1)[0]
	remote := e2etest.HTTPRemote(t)
	status := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.Write(fleetDir+"/cluster.yaml", hostileCluster)
	co.Write(fleetDir+"/policy.yaml", hostilePolicy)
	co.Write(fleetDir+"/ns.yaml", hostileNamespace)
	co.Write(fleetDir+"/app/cm.yaml", hostileConfigMap("ConfigMap", "app", "v1"))
	good := co.CommitPush("app v1")

	health := e2etest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "controller", "--repo", remote.URL, "--branch", branch, "--path", fleetDir,
		"--kubeconfig-dir", e2etest.KubeconfigDir(t, m1), "--cache-dir", t.TempDir(), "--interval", "1s",
		"--health-addr", health, "--http-addr", "")
	// What setMemoryLimit derives from a 1 GiB cgroup (no cgroup here).
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMEMLIMIT=%d", memoryBudget*9/10))
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("controller log:\n%s", logs.String())
		}
	})

	// /healthz must keep answering, probed a kubelet's way (1 s timeout)
	// but five times a second, until the end. It cannot answer every
	// probe: go-git's pack indexer zeroes a buffer the size of each object
	// it indexes, and zeroing 200 MB is one call the Go runtime cannot
	// preempt, so the GC waits for it and every goroutine that allocates
	// waits for the GC (1–2.2 s measured). The kubelet restarts a
	// container after three failed probes 10 s apart (the defaults
	// deploy/ keeps); what must not happen is a stretch of failures as
	// long as one of its periods.
	var probes, failures atomic.Int64
	var lastFailure atomic.Value
	var longest atomic.Int64 // the longest stretch of consecutive failures, in ns
	probeCtx, stopProbes := context.WithCancel(context.Background())
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		client := &http.Client{Timeout: time.Second}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		var failingSince time.Time
		for {
			select {
			case <-probeCtx.Done():
				return
			case <-tick.C:
			}
			start := time.Now()
			resp, err := client.Get("http://" + health + "/healthz")
			probes.Add(1)
			if err == nil {
				resp.Body.Close()
			}
			if err == nil && resp.StatusCode == http.StatusOK {
				failingSince = time.Time{}
				continue
			}
			failures.Add(1)
			lastFailure.Store(fmt.Sprint(err))
			if failingSince.IsZero() {
				failingSince = start
			}
			if d := time.Since(failingSince); int64(d) > longest.Load() {
				longest.Store(int64(d))
			}
		}
	}()
	eventually(t, converge, func() (bool, string) {
		cm, err := getConfigMap(m1, "shop", "app")
		return err == nil && cm != nil && cm.Data["value"] == "v1", fmt.Sprintf("ConfigMap shop/app: %v, %v", cm, err)
	})
	status.waitApplied(good, m1.Name)
	failures.Store(0) // the server may start after the first probes
	longest.Store(0)

	bombs := []struct {
		name  string
		files map[string]string
		where string
	}{
		{"alias bomb inside a kustomization", map[string]string{
			"bomb/kustomization.yaml": "resources:\n- bomb.yaml\n",
			"bomb/bomb.yaml":          aliasBomb("bomb", 11, 9),
		}, "bomb/bomb.yaml:"},
		{"sixty documents just under the per-document budget", map[string]string{
			"many/docs.yaml": manyBombs(60),
		}, "many/docs.yaml:"},
		{"a 200 MB file", map[string]string{
			"big/big.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: shop\ndata:\n" + strings.Repeat("  k: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n", 200<<20/60),
		}, "big/big.yaml: file is"},
	}
	for _, bomb := range bombs {
		for file, content := range bomb.files {
			co.Write(fleetDir+"/"+file, content)
		}
		co.Edit(fleetDir+"/app/cm.yaml", `"v1"`, `"bad"`)
		bad := co.CommitPush(bomb.name)
		eventually(t, converge, func() (bool, string) {
			l := logs.String()
			return strings.Contains(l, bomb.where) && strings.Contains(l, bad[:7]),
				fmt.Sprintf("no log naming %s for %s", bomb.where, e2etest.Short(bad))
		})
		if rss, err := peakRSS(cmd.Process.Pid); err == nil {
			t.Logf("%s: refused; controller peak RSS so far %d MiB", bomb.name, rss>>20)
		}
		if cm, err := getConfigMap(m1, "shop", "app"); err != nil || cm == nil || cm.Data["value"] != "v1" {
			t.Errorf("%s: the member's ConfigMap is %v (%v), want the last good v1", bomb.name, cm, err)
		}
		if st, err := status.get(m1.Name); err != nil || st.AppliedRevision != good {
			t.Errorf("%s: status %+v (%v), want %s applied", bomb.name, st, err, e2etest.Short(good))
		}
		for file := range bomb.files {
			co.Remove(fleetDir + "/" + file)
		}
		co.Edit(fleetDir+"/app/cm.yaml", `"bad"`, `"v1"`)
	}

	// Still working: a good commit lands.
	co.Edit(fleetDir+"/app/cm.yaml", `"v1"`, `"v2"`)
	rev := co.CommitPush("app v2")
	eventually(t, converge, func() (bool, string) {
		cm, err := getConfigMap(m1, "shop", "app")
		return err == nil && cm != nil && cm.Data["value"] == "v2", fmt.Sprintf("ConfigMap shop/app: %v, %v", cm, err)
	})
	status.waitApplied(rev, m1.Name)

	rss, err := peakRSS(cmd.Process.Pid)
	stopProbes()
	<-probed
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller peak RSS %d MiB; %d /healthz probes, %d failed (longest stretch %s)",
		rss>>20, probes.Load(), failures.Load(), time.Duration(longest.Load()).Round(time.Millisecond))
	if rss > memoryBudget {
		t.Errorf("peak RSS %d MiB, over the 1 GiB budget", rss>>20)
	}
	if d := time.Duration(longest.Load()); d >= 10*time.Second {
		t.Errorf("/healthz failed for %s in a row, a kubelet period, last: %v", d.Round(time.Millisecond), lastFailure.Load())
	}
	if n, all := failures.Load(), probes.Load(); n*10 > all {
		t.Errorf("%d of %d /healthz probes failed (more than 10%%), last: %v", n, all, lastFailure.Load())
	}
}

// manyBombs is n ConfigMaps, each expanding to about 930k YAML nodes, just
// under the per-document budget of 1Mi.
func manyBombs(n int) string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = aliasBomb(fmt.Sprintf("near-%d", i), 4, 9)
	}
	return strings.Join(docs, "---\n")
}

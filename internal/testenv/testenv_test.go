package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestThreeMembers(t *testing.T) {
	e := Start(t, Options{Members: 3})
	ctx := t.Context()
	if len(e.Members) != 3 {
		t.Fatalf("got %d members, want 3", len(e.Members))
	}
	ns := "testenv-" + utilrand.String(6)
	uids := map[string]string{}
	for _, m := range e.Members {
		createNamespace(ctx, t, m.Client(), ns)
		d, err := m.Client().AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 2), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: failed to create Deployment: %v", m.Name, err)
		}
		uids[m.Name] = string(d.UID)
		assertKubeconfigWorks(ctx, t, m, ns)
	}

	m2 := e.Members[1]
	before := m2.PIDs()
	if err := m2.StopAPIServer(); err != nil {
		t.Fatalf("StopAPIServer: %v", err)
	}
	after := m2.PIDs()
	if _, ok := after[binAPIServer]; ok {
		t.Fatalf("kube-apiserver still running after StopAPIServer: %v", after)
	}
	if after[binEtcd] != before[binEtcd] {
		t.Fatalf("etcd pid changed from %d to %d; StopAPIServer must leave etcd running", before[binEtcd], after[binEtcd])
	}
	reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := m2.Client().CoreV1().Namespaces().Get(reqCtx, ns, metav1.GetOptions{})
	cancel()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("request to the stopped apiserver: got error %v, want connection refused", err)
	}
	for _, m := range []*Member{e.Members[0], e.Members[2]} {
		if _, err := m.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			t.Fatalf("%s must be unaffected by stopping member2: %v", m.Name, err)
		}
	}

	restartBegan := time.Now()
	if err := m2.StartAPIServer(); err != nil {
		t.Fatalf("StartAPIServer: %v", err)
	}
	t.Logf("member2 kube-apiserver restarted in %s", time.Since(restartBegan).Round(10*time.Millisecond))
	if pid := m2.PIDs()[binAPIServer]; pid == 0 || pid == before[binAPIServer] {
		t.Fatalf("kube-apiserver pid after restart = %d, before = %d: want a new process", pid, before[binAPIServer])
	}
	// The same clientset, built from the same rest.Config before the restart.
	d, err := m2.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Deployment after restart: %v", err)
	}
	if string(d.UID) != uids[m2.Name] {
		t.Fatalf("Deployment UID after restart = %s, want %s (etcd must keep the data)", d.UID, uids[m2.Name])
	}

	// A kill does not wait for the graceful shutdown (15 s grace).
	killed := time.Now()
	if err := m2.KillAPIServer(); err != nil {
		t.Fatalf("KillAPIServer: %v", err)
	}
	if took := time.Since(killed); took >= stopGrace {
		t.Errorf("KillAPIServer took %s, as long as the graceful stop", took)
	}
	reqCtx, cancel = context.WithTimeout(ctx, 10*time.Second)
	_, err = m2.Client().CoreV1().Namespaces().Get(reqCtx, ns, metav1.GetOptions{})
	cancel()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("request to the killed apiserver: got error %v, want connection refused", err)
	}
	if err := m2.StartAPIServer(); err != nil {
		t.Fatalf("StartAPIServer after a kill: %v", err)
	}
	assertKubeconfigWorks(ctx, t, m2, ns)

	stopAndAssertClean(t, e)
}

func TestWorkloadsRun(t *testing.T) {
	e := Start(t, Options{Members: 1, Workloads: true})
	ctx := t.Context()
	m := e.Members[0]
	ns := "testenv-" + utilrand.String(6)
	createNamespace(ctx, t, m.Client(), ns)

	created := time.Now()
	if _, err := m.Client().AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("failed to create Deployment: %v", err)
	}
	waitFor(t, 90*time.Second, "Deployment web has 3 available replicas", func() error {
		d, err := m.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas != 3 || !deploymentAvailable(d) {
			return fmt.Errorf("status: %+v", d.Status)
		}
		return nil
	})
	t.Logf("Deployment with 3 replicas Available %s after create", time.Since(created).Round(10*time.Millisecond))

	pods, err := m.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("failed to list Pods: %v", err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != FakeNodeName || p.Status.Phase != corev1.PodRunning {
			t.Errorf("Pod %s: node %q phase %s, want %s Running", p.Name, p.Spec.NodeName, p.Status.Phase, FakeNodeName)
		}
	}
	// The fake node heartbeats through its Lease: renewed, it keeps the
	// node (and its pods) Ready past the node lifecycle controller's grace
	// period.
	var first time.Time
	waitFor(t, 60*time.Second, "the Lease of "+FakeNodeName+" renewed", func() error {
		l, err := m.Client().CoordinationV1().Leases("kube-node-lease").Get(ctx, FakeNodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.RenewTime == nil {
			return errors.New("no renew time")
		}
		if first.IsZero() {
			first = l.Spec.RenewTime.Time
		}
		if !l.Spec.RenewTime.After(first) {
			return fmt.Errorf("renewed at %s only", first)
		}
		return nil
	})
	logRSS(t, m)
	stopAndAssertClean(t, e)
}

func TestNewFailsWithoutAssets(t *testing.T) {
	_, err := New(Options{AssetsDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "run make test-assets") {
		t.Fatalf("New without binaries: got error %v, want one saying to run make test-assets", err)
	}
}

// createNamespace creates a namespace or fails the test.
func createNamespace(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("failed to create Namespace/%s: %v", name, err)
	}
}

// assertKubeconfigWorks reads the namespace through a client built from the
// member's kubeconfig file.
func assertKubeconfigWorks(ctx context.Context, t *testing.T, m *Member, ns string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
	if err != nil {
		t.Fatalf("%s: failed to load kubeconfig: %v", m.Name, err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("%s: failed to build client from kubeconfig: %v", m.Name, err)
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("%s: Namespace/%s through the kubeconfig: %v", m.Name, ns, err)
	}
}

// deployment returns the smallest Deployment with the given replicas.
func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitFor polls check until it returns nil or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s: %v", timeout, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logRSS logs the resident memory of each of the member's processes and
// their sum, read from /proc/<pid>/status.
func logRSS(t *testing.T, m *Member) {
	t.Helper()
	var total int
	var parts []string
	for name, pid := range m.PIDs() {
		kib, err := rssKiB(pid)
		if err != nil {
			t.Errorf("RSS of %s (pid %d): %v", name, pid, err)
			continue
		}
		total += kib
		parts = append(parts, fmt.Sprintf("%s %d MiB", name, kib/1024))
	}
	t.Logf("RSS of %s: %d MiB total (%s)", m.Name, total/1024, strings.Join(parts, ", "))
}

func rssKiB(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
		}
	}
	return 0, errors.New("no VmRSS line")
}

// stopAndAssertClean stops e and checks that no process it started is left
// and that its temporary root is gone.
func stopAndAssertClean(t *testing.T, e *Env) {
	t.Helper()
	dir, pids := e.Dir(), e.StartedPIDs()
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertNoProcesses(t, dir, pids)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary root %s still exists after Stop (stat error: %v)", dir, err)
	}
}

// assertNoProcesses checks that none of pids is alive as one of ours and that
// no process's command line names dir.
func assertNoProcesses(t *testing.T, dir string, pids []int) {
	t.Helper()
	if len(pids) == 0 {
		t.Fatal("no started processes recorded")
	}
	for _, pid := range pids {
		if cmdline, err := readCmdline(pid); err == nil && strings.Contains(cmdline, dir) {
			t.Errorf("process %d is still alive: %s", pid, cmdline)
		}
	}
	for _, p := range processesNaming(dir) {
		t.Errorf("leftover process: %s", p)
	}
}

// processesNaming scans /proc for processes whose command line contains s.
func processesNaming(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		if cmdline, err := readCmdline(pid); err == nil && strings.Contains(cmdline, s) {
			found = append(found, fmt.Sprintf("%d: %s", pid, cmdline))
		}
	}
	return found
}

func readCmdline(pid int) (string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(data), "\x00", " "), nil
}

// TestAuditLogRecordsWrites: with Audit, the member's own audit log names
// each write (verb, object, user) and survives an apiserver restart, so a
// test can prove who wrote to a member from the member itself.
func TestAuditLogRecordsWrites(t *testing.T) {
	e := Start(t, Options{Audit: true})
	m := e.Members[0]
	ctx := t.Context()
	ns := "audit-" + utilrand.String(6)
	createNamespace(ctx, t, m.Client(), ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: ns}}
	if _, err := m.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := m.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	cm.Name = "after"
	if _, err := m.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Blocking mode: the event is written before the answer is sent.
	data, err := os.ReadFile(m.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before", "after"} {
		found := false
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, `"verb":"create"`) && strings.Contains(line, `"name":"`+name+`"`) &&
				strings.Contains(line, `"namespace":"`+ns+`"`) && strings.Contains(line, `"username":"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("the audit log has no create of ConfigMap %s/%s:\n%s", ns, name, tailFile(m.AuditLogPath(), 10))
		}
	}
	if strings.Contains(string(data), `"verb":"get"`) || strings.Contains(string(data), `"verb":"watch"`) {
		t.Error("the audit log records reads; the policy keeps writes only")
	}
}

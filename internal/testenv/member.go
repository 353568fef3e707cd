package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// startTimeout bounds how long one member may take to become ready.
	// Several apiservers starting at once on 2 cores take well under a minute.
	startTimeout = 3 * time.Minute
	// stopGrace is how long a process may take to exit after SIGTERM before
	// its process group is killed.
	stopGrace = 15 * time.Second
	// pollInterval is how often readiness is checked.
	pollInterval = 100 * time.Millisecond
)

// Member is one member cluster running from binaries in its own folder.
type Member struct {
	// Name is member1, member2, …; it is also the kubeconfig context name.
	Name string
	// Config reaches the apiserver as a system:masters user with client
	// rate limits raised for tests. It stays valid across StopAPIServer and
	// StartAPIServer. Copy it with rest.CopyConfig before changing it.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file equivalent to Config.
	KubeconfigPath string
	// Dir holds the member's certificates, etcd data, kubeconfig and logs.
	Dir string

	assets    string
	workloads bool
	audit     bool
	pki       *pki
	etcdPort  int
	peerPort  int
	apiPort   int
	client    *kubernetes.Clientset

	mu        sync.Mutex
	closed    bool       // set by stop; no process may start afterwards
	procs     []*process // every process ever started, in start order
	apiserver *process   // the current kube-apiserver
}

// newMember prepares a member's folder, ports, certificates, kubeconfig and
// client without starting anything.
func newMember(root, name, assets string, workloads, audit bool) (*Member, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create folder of %s: %w", name, err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	p, err := newPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("failed to create certificates of %s: %w", name, err)
	}
	m := &Member{
		Name:           name,
		Dir:            dir,
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		assets:         assets,
		workloads:      workloads,
		audit:          audit,
		pki:            p,
		etcdPort:       ports[0],
		peerPort:       ports[1],
		apiPort:        ports[2],
	}
	m.Config = m.restConfig()
	if err := writeKubeconfig(m.KubeconfigPath, name, m.Config); err != nil {
		return nil, err
	}
	if m.client, err = kubernetes.NewForConfig(m.Config); err != nil {
		return nil, fmt.Errorf("failed to create client of %s: %w", name, err)
	}
	return m, nil
}

// AuditLogPath is the member's audit log (JSON lines, one event per
// request that changed something), written only with Options.Audit. It
// survives apiserver restarts: a restarted apiserver appends to it.
func (m *Member) AuditLogPath() string { return filepath.Join(m.Dir, "audit.log") }

// restConfig returns the admin config for the member's apiserver.
func (m *Member) restConfig() *rest.Config {
	return &rest.Config{
		Host: fmt.Sprintf("https://127.0.0.1:%d", m.apiPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   m.pki.caPEM,
			CertData: m.pki.adminCert,
			KeyData:  m.pki.adminKey,
		},
		QPS:   200,
		Burst: 400,
	}
}

// Client returns a client-go clientset built from Config.
func (m *Member) Client() *kubernetes.Clientset { return m.client }

// APIServerURL returns the apiserver's base URL, which never changes.
func (m *Member) APIServerURL() string { return m.Config.Host }

// PIDs returns the process ids of the member's running processes by binary
// name (etcd, kube-apiserver, and with workloads kube-controller-manager,
// kube-scheduler, kwok).
func (m *Member) PIDs() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	pids := map[string]int{}
	for _, p := range m.procs {
		if p.running() {
			pids[p.name] = p.pid()
		}
	}
	return pids
}

// start starts etcd and the apiserver, then the workload processes if asked,
// and returns once the member is ready.
func (m *Member) start(ctx context.Context) error {
	etcd := m.newProcess(binEtcd, m.etcdArgs())
	if err := m.launch(etcd); err != nil {
		return err
	}
	if err := waitUntil(ctx, "etcd is healthy", m.etcdHealthy, etcd); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	if err := m.startAPIServer(ctx); err != nil {
		return err
	}
	if m.workloads {
		return m.startWorkloads(ctx)
	}
	return nil
}

// StopAPIServer stops only the member's kube-apiserver and waits until it has
// exited. etcd, its data and every other process keep running. Stopping an
// apiserver that is not running is a no-op.
func (m *Member) StopAPIServer() error { return m.stopAPIServer(stopGrace) }

// KillAPIServer kills the member's kube-apiserver at once (SIGKILL), as a
// crash or a lost machine would, and waits until it has exited. Unlike
// StopAPIServer it does not wait for kube-apiserver's graceful shutdown,
// which takes its whole 15 s grace, so a test can time what follows the
// failure from the moment it happened.
func (m *Member) KillAPIServer() error { return m.stopAPIServer(0) }

func (m *Member) stopAPIServer(grace time.Duration) error {
	m.mu.Lock()
	p := m.apiserver
	m.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.stop(grace); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return nil
}

// StartAPIServer starts the member's kube-apiserver again on the same port
// with the same certificates, and waits until it reports /readyz. Config and
// the kubeconfig file keep working.
func (m *Member) StartAPIServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return m.startAPIServer(ctx)
}

func (m *Member) startAPIServer(ctx context.Context) error {
	m.mu.Lock()
	running := m.apiserver != nil && m.apiserver.running()
	m.mu.Unlock()
	if running {
		return fmt.Errorf("%s: kube-apiserver is already running", m.Name)
	}
	p := m.newProcess(binAPIServer, m.apiserverArgs())
	if err := m.launch(p); err != nil {
		return err
	}
	m.mu.Lock()
	m.apiserver = p
	m.mu.Unlock()
	if err := waitUntil(ctx, "kube-apiserver reports /readyz", m.apiserverReady, p); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return nil
}

// newProcess describes one of the member's binaries logging to <name>.log.
func (m *Member) newProcess(bin string, args []string) *process {
	return &process{
		name:    bin,
		path:    filepath.Join(m.assets, bin),
		args:    args,
		logPath: filepath.Join(m.Dir, bin+".log"),
	}
}

// launch starts p unless the member has been stopped; holding the lock across
// the start means stop never misses a process.
func (m *Member) launch(p *process) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("%s: not starting %s: the environment is stopping", m.Name, p.name)
	}
	if err := p.start(); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	m.procs = append(m.procs, p)
	return nil
}

// stop stops every process in reverse start order, so clients go before the
// apiserver and the apiserver before etcd. It is safe to call more than once.
func (m *Member) stop() error {
	m.mu.Lock()
	m.closed = true
	procs := append([]*process(nil), m.procs...)
	m.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		// No grace: the folder is removed next, so nothing a graceful
		// shutdown saves is kept, and an apiserver with a watch open would
		// use its whole grace.
		if err := procs[i].stop(0); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// startedPIDs returns the ids of every process the member ever started,
// including apiservers that were restarted since.
func (m *Member) startedPIDs() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	pids := make([]int, 0, len(m.procs))
	for _, p := range m.procs {
		pids = append(pids, p.pid())
	}
	return pids
}

// etcdHealthy checks etcd's /health endpoint.
func (m *Member) etcdHealthy(ctx context.Context) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/health", m.etcdPort)
	return httpOK(ctx, http.DefaultClient, url)
}

// apiserverReady checks the apiserver's /readyz endpoint with the admin
// credentials.
func (m *Member) apiserverReady(ctx context.Context) error {
	rt, err := rest.TransportFor(m.Config)
	if err != nil {
		return err
	}
	return httpOK(ctx, &http.Client{Transport: rt}, m.Config.Host+"/readyz")
}

// httpOK returns nil if a GET of url answers 200.
func httpOK(ctx context.Context, c *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// waitUntil polls check until it returns nil, ctx ends, or one of the
// watched processes exits; the error then carries the last check error and,
// for an exit, the tail of that process's log.
func waitUntil(ctx context.Context, what string, check func(context.Context) error, watched ...*process) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		for _, p := range watched {
			if !p.running() {
				return fmt.Errorf("waiting until %s: %w", what, p.exitError())
			}
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("timed out waiting until %s (last error: %v)", what, err)
			for _, p := range watched {
				msg += fmt.Sprintf("\n%s log tail:\n%s", p.name, tailFile(p.logPath, 20))
			}
			return errors.New(msg)
		case <-ticker.C:
		}
	}
}

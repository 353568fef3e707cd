package pull

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/testenv"
)

// requestCounter counts the requests a client sends to a member, split
// into reads, server-side dry runs (ssa's drift check: a PATCH that
// changes nothing) and writes (everything else that is not a read).
type requestCounter struct {
	mu      sync.Mutex
	reads   int
	dryRuns int
	writes  []string
}

// wrap returns a copy of cfg whose requests r counts.
func (r *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return &countingTransport{next: rt, c: r}
	}
	return cfg
}

func (r *requestCounter) record(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodOptions:
		r.reads++ // get, list and watch
	case req.URL.Query().Has("dryRun"):
		r.dryRuns++
	default:
		r.writes = append(r.writes, req.Method+" "+req.URL.Path)
	}
}

// reset forgets everything counted so far.
func (r *requestCounter) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads, r.dryRuns, r.writes = 0, 0, nil
}

// counts returns the reads, dry runs and writes counted.
func (r *requestCounter) counts() (reads, dryRuns int, writes []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, r.dryRuns, slices.Clone(r.writes)
}

type countingTransport struct {
	next http.RoundTripper
	c    *requestCounter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.record(req)
	return t.next.RoundTrip(req)
}

// getConfigMap reads ConfigMap ns/name from m.
func getConfigMap(m *testenv.Member, ns, name string) (*corev1.ConfigMap, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	return m.Client().CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

// configMapValue is an eventually condition: ConfigMap ns/name on m exists,
// carries propagit's managed label, and data.value is want.
func configMapValue(m *testenv.Member, ns, name, want string) func() (bool, string) {
	return func() (bool, string) {
		cm, err := getConfigMap(m, ns, name)
		if err != nil {
			return false, fmt.Sprintf("%s: ConfigMap %s/%s: %v", m.Name, ns, name, err)
		}
		if cm.Labels["propagit.io/managed"] != "true" {
			return false, fmt.Sprintf("%s: ConfigMap %s/%s has labels %v, want propagit.io/managed=true", m.Name, ns, name, cm.Labels)
		}
		if got := cm.Data["value"]; got != want {
			return false, fmt.Sprintf("%s: ConfigMap %s/%s value=%q, want %q", m.Name, ns, name, got, want)
		}
		return true, ""
	}
}

// absent is an eventually condition: ConfigMap ns/name is not on m.
func absent(m *testenv.Member, ns, name string) func() (bool, string) {
	return func() (bool, string) {
		_, err := getConfigMap(m, ns, name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("%s: ConfigMap %s/%s: err=%v, want NotFound", m.Name, ns, name, err)
	}
}

// all combines eventually conditions: every one must hold.
func all(conds ...func() (bool, string)) func() (bool, string) {
	return func() (bool, string) {
		var msgs []string
		for _, c := range conds {
			if ok, msg := c(); !ok {
				msgs = append(msgs, msg)
			}
		}
		return len(msgs) == 0, strings.Join(msgs, "; ")
	}
}

// snapshotConfigMaps returns name → resourceVersion/value of every
// ConfigMap in ns on m, to prove later that nothing was written.
func snapshotConfigMaps(t testing.TB, m *testenv.Member, ns string) map[string]string {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	l, err := m.Client().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: failed to list ConfigMaps in %s: %v", m.Name, ns, err)
	}
	out := map[string]string{}
	for _, cm := range l.Items {
		out[cm.Name] = cm.ResourceVersion + "/" + cm.Data["value"]
	}
	return out
}

package apply

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// benchNamespaces × benchPerNamespace objects per apply.
const (
	benchNamespaces   = 10
	benchPerNamespace = 100
)

// countingTransport counts the requests that reach the apiserver.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// countedConfig returns the member's config with requests counted in n and
// the rate limits of DefaultOptions.
func countedConfig(n *atomic.Int64) *rest.Config {
	cfg := RESTConfig(member.Config, DefaultOptions())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: n} })
	return cfg
}

// benchOptions is DefaultOptions, with Concurrency from
// $APPLY_BENCH_CONCURRENCY when set (to compare settings).
func benchOptions(b *testing.B) Options {
	opts := DefaultOptions()
	if v := os.Getenv("APPLY_BENCH_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("APPLY_BENCH_CONCURRENCY: %v", err)
		}
		opts.Concurrency = n
	}
	return opts
}

// benchObjects returns 1,000 rendered objects (ConfigMaps, headless
// Services, Deployments) in 10 namespaces named <prefix>-<n>, and the
// namespace names. The namespaces themselves are not among the objects.
func benchObjects(b *testing.B, prefix string) ([]*unstructured.Unstructured, []string) {
	var objs []*unstructured.Unstructured
	var namespaces []string
	for n := range benchNamespaces {
		ns := uniqueNS(prefix)
		namespaces = append(namespaces, ns)
		for i := range benchPerNamespace {
			name := fmt.Sprintf("obj-%03d", i)
			switch i % 3 {
			case 0:
				objs = append(objs, configMap(b, ns, name, strconv.Itoa(n*i)))
			case 1:
				objs = append(objs, service(b, ns, name))
			default:
				objs = append(objs, deployment(b, ns, name, "nginx:1.27"))
			}
		}
	}
	return objs, namespaces
}

// BenchmarkApply measures, against one real member:
//
//   - first: the first apply of 1,000 objects in 10 new namespaces (ns/op,
//     requests/op). In the same iteration, outside the timer, the same kind
//     of set is applied by a sequential loop of one server-side apply per
//     object with a plain client — what `kubectl apply --server-side` does
//     (there is no kubectl binary here) — and by fluxcd/pkg/ssa's
//     ApplyAllStaged; their times and the speed-up are reported as extra
//     metrics.
//   - unchanged: a re-apply of 1,000 unchanged objects with their inventory
//     (ns/op, requests/op).
//   - health: Health of those 1,000 objects (ns/op, requests/op).
func BenchmarkApply(b *testing.B) {
	b.Run("first", benchFirstApply)
	b.Run("unchanged", benchUnchangedApply)
	b.Run("health", benchHealth)
}

func benchFirstApply(b *testing.B) {
	ctx := b.Context()
	var requests atomic.Int64
	m, err := NewForConfig(countedConfig(&requests), benchOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := client.New(RESTConfig(member.Config, DefaultOptions()), client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	staged := ssa.NewResourceManager(plain, polling.NewStatusPoller(plain, plain.RESTMapper(), polling.Options{}),
		ssa.Owner{Field: "flux", Group: "flux.test"})
	staged.SetConcurrency(benchOptions(b).Concurrency)
	warmUp(b, m, plain)

	var ours, sequential, allStaged time.Duration
	var oursCPU, sequentialCPU time.Duration
	var reqs int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		objs, _ := benchObjects(b, "bench-first")
		requests.Store(0)
		b.StartTimer()
		began, cpu := time.Now(), apiserverCPU(b)
		res, err := m.Apply(ctx, objs, nil)
		ours += time.Since(began)
		b.StopTimer()
		oursCPU += apiserverCPU(b) - cpu
		reqs += requests.Load()
		if err != nil || res.Failed != 0 || res.Count(workv1alpha1.ActionCreated) != len(objs) {
			b.Fatalf("Apply: %v, %s", err, res)
		}
		cpu = apiserverCPU(b)
		sequential += timeIt(b, func() { sequentialApply(b, plain, "bench-seq") })
		sequentialCPU += apiserverCPU(b) - cpu
		allStaged += timeIt(b, func() { applyAllStaged(b, staged, "bench-staged") })
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(reqs)/n, "requests/op")
	b.ReportMetric(float64(sequential.Nanoseconds())/n, "sequential-ns/op")
	b.ReportMetric(float64(allStaged.Nanoseconds())/n, "applyallstaged-ns/op")
	b.ReportMetric(float64(sequential)/float64(ours), "x-faster-than-sequential")
	b.ReportMetric(oursCPU.Seconds()/n, "apiserver-cpu-s/op")
	b.ReportMetric(sequentialCPU.Seconds()/n, "sequential-apiserver-cpu-s/op")
	b.ReportMetric(float64(allStaged)/float64(ours), "x-faster-than-applyallstaged")
}

func benchUnchangedApply(b *testing.B) {
	ctx := b.Context()
	var requests atomic.Int64
	m, err := NewForConfig(countedConfig(&requests), benchOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	objs, _ := benchObjects(b, "bench-unchanged")
	first, err := m.Apply(ctx, objs, nil)
	if err != nil || first.Failed != 0 {
		b.Fatalf("first Apply: %v, %s", err, first)
	}
	requests.Store(0)
	b.ResetTimer()
	for range b.N {
		res, err := m.Apply(ctx, objs, first.Inventory)
		if err != nil || res.Count(workv1alpha1.ActionUnchanged) != len(objs) {
			b.Fatalf("Apply: %v, %s", err, res)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
}

func benchHealth(b *testing.B) {
	ctx := b.Context()
	var requests atomic.Int64
	m, err := NewForConfig(countedConfig(&requests), benchOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	objs, _ := benchObjects(b, "bench-health")
	first, err := m.Apply(ctx, objs, nil)
	if err != nil || first.Failed != 0 {
		b.Fatalf("first Apply: %v, %s", err, first)
	}
	requests.Store(0)
	b.ResetTimer()
	for range b.N {
		health, err := m.Health(ctx, first.Inventory)
		if err != nil || len(health) != len(objs) {
			b.Fatalf("Health: %v, %d results", err, len(health))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
}

// warmUp fills the clients' REST mappers so no iteration pays for
// discovery.
func warmUp(b *testing.B, m *Manager, plain client.Client) {
	ns := uniqueNS("bench-warm")
	objs := []*unstructured.Unstructured{configMap(b, ns, "a", "1"), service(b, ns, "a"), deployment(b, ns, "a", "nginx:1")}
	if _, err := m.Apply(b.Context(), objs, nil); err != nil {
		b.Fatal(err)
	}
	for _, o := range objs {
		if _, err := plain.IsObjectNamespaced(o); err != nil {
			b.Fatal(err)
		}
	}
}

// apiserverCPU returns the CPU time the member's kube-apiserver has used.
func apiserverCPU(b *testing.B) time.Duration {
	pid := member.PIDs()["kube-apiserver"]
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0 // not Linux: the metric reads 0
	}
	// Fields after the parenthesised command: utime and stime are the 12th
	// and 13th, in clock ticks (100 per second on Linux).
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func timeIt(b *testing.B, f func()) time.Duration {
	b.Helper()
	began := time.Now()
	f()
	return time.Since(began)
}

// sequentialApply creates the namespaces, then server-side applies each
// object in turn with one request, as kubectl does.
func sequentialApply(b *testing.B, c client.Client, prefix string) {
	objs, namespaces := benchObjects(b, prefix)
	ctx := b.Context()
	for _, ns := range namespaces {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(namespace(b, ns)),
			client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
			b.Fatal(err)
		}
	}
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o),
			client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
			b.Fatal(err)
		}
	}
}

// applyAllStaged applies the namespaces and the objects with
// fluxcd/pkg/ssa's ApplyAllStaged (all or nothing, the apply phase
// sequential).
func applyAllStaged(b *testing.B, rm *ssa.ResourceManager, prefix string) {
	objs, namespaces := benchObjects(b, prefix)
	for _, ns := range namespaces {
		objs = append(objs, namespace(b, ns))
	}
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	if _, err := rm.ApplyAllStaged(ctx, objs, ssa.DefaultApplyOptions()); err != nil {
		b.Fatal(err)
	}
}

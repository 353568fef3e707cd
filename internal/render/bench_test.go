package render_test

// The render benchmark of issues #3 and #18: 1,000 templates, 50
// label-selector policies, 100 clusters in 4 regions and 3 override rules
// per template (e2e/fleet), rendered to every cluster; and, in the same
// run, kustomize building the equivalent 100 per-cluster overlays, the way
// teams do without propagit.
//
//	go test -run '^$' -bench . -benchmem -benchtime 3x ./internal/render/
//
// Both repositories are generated from one deterministic model, and both
// outputs are checked against that model, so a broken generator or a broken
// render fails instead of benchmarking nothing.

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
	"github.com/propagit/propagit/internal/render/rendertest"
)

const (
	benchTemplateCount = 1000
	benchClusterCount  = 100

	benchRepoRoot      = "/repo"
	benchKustomizeRoot = "/kustomize"
)

// benchFixture holds the generated inputs, built once per process.
type benchFixture struct {
	model     *fleet.Model
	repo      filesys.FileSystem // the propagit repository under benchRepoRoot
	kustomize filesys.FileSystem // the same scenario as overlays under benchKustomizeRoot
	set       *load.Set          // repo loaded once, for BenchmarkRender
}

var (
	benchOnce sync.Once
	benchFx   *benchFixture
	benchErr  error
)

func benchFixtures(b *testing.B) *benchFixture {
	b.Helper()
	benchOnce.Do(func() { benchFx, benchErr = newBenchFixture() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFx
}

func newBenchFixture() (*benchFixture, error) {
	m, err := fleet.New(benchTemplateCount, benchClusterCount)
	if err != nil {
		return nil, err
	}
	fx := &benchFixture{model: m, repo: filesys.MakeFsInMemory(), kustomize: filesys.MakeFsInMemory()}
	if err := m.WriteRepo(fx.repo, benchRepoRoot); err != nil {
		return nil, err
	}
	if err := m.WriteKustomize(fx.kustomize, benchKustomizeRoot); err != nil {
		return nil, err
	}
	if fx.set, err = load.Load(fx.repo, benchRepoRoot); err != nil {
		return nil, fmt.Errorf("failed to load the bench repository: %w", err)
	}
	if err := checkBenchSet(fx.set); err != nil {
		return nil, err
	}
	all, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fx.kustomize, benchKustomizeRoot+"/base")
	if err != nil {
		return nil, fmt.Errorf("failed to build the kustomize base: %w", err)
	}
	if all.Size() != benchTemplateCount {
		return nil, fmt.Errorf("kustomize base builds %d resources, want %d", all.Size(), benchTemplateCount)
	}
	return fx, nil
}

func checkBenchSet(set *load.Set) error {
	groups := benchTemplateCount / 20
	if len(set.Findings) > 0 {
		return fmt.Errorf("loading the bench repository found %d problems, first: %s", len(set.Findings), set.Findings[0])
	}
	if len(set.Templates) != benchTemplateCount || len(set.Propagations) != groups ||
		len(set.Overrides) != groups || len(set.Clusters) != benchClusterCount {
		return fmt.Errorf("loaded %d templates, %d propagation policies, %d override policies, %d clusters; want %d, %d, %d, %d",
			len(set.Templates), len(set.Propagations), len(set.Overrides), len(set.Clusters),
			benchTemplateCount, groups, groups, benchClusterCount)
	}
	return nil
}

func checkBenchKustomize(m *fleet.Model, c int, rm resmap.ResMap) error {
	objs := make([]map[string]any, 0, rm.Size())
	for _, r := range rm.Resources() {
		u, err := r.Map()
		if err != nil {
			return fmt.Errorf("failed to read a kustomize resource of cluster %d: %w", c, err)
		}
		objs = append(objs, u)
	}
	return m.Check(c, objs)
}

func checkBenchRender(m *fleet.Model, res *render.Result) (int, error) {
	if len(res.Works) != benchClusterCount {
		return 0, fmt.Errorf("render produced Works for %d clusters, want %d", len(res.Works), benchClusterCount)
	}
	total := 0
	for c, work := range res.Works {
		if work.Cluster != m.Clusters[c].Name {
			return 0, fmt.Errorf("Work %d is for cluster %q, want %q", c, work.Cluster, m.Clusters[c].Name)
		}
		objs := make([]map[string]any, 0, len(work.Objects))
		for _, o := range work.Objects {
			objs = append(objs, o.Object)
		}
		if err := m.Check(c, objs); err != nil {
			return 0, err
		}
		total += len(objs)
	}
	return total, nil
}

// benchMeter measures what ns/op and allocs/op do not, from the start of a
// benchmark loop (after a GC that returns free memory to the OS) to its end:
//   - peak-heap-MiB: the maximum of /memory/classes/heap/objects:bytes, the
//     heap objects live or not yet swept (what GOGC lets grow between GCs),
//     absolute: the inputs and the retained result are included;
//   - peak-sys-MiB: the maximum of /memory/classes/total:bytes minus
//     heap/released, the memory the runtime holds from the OS (≈ its RSS);
//   - cpu-s/op: user+system CPU of the process per op (GC included), which
//     unlike ns/op does not grow when other work shares the machine.
//
// Memory is sampled every millisecond; a shorter spike can be missed.
type benchMeter struct {
	stop, done  chan struct{}
	heap, total uint64
	cpu         time.Duration
}

func startBenchMeter() *benchMeter {
	debug.FreeOSMemory() // a GC, and what earlier benchmarks left goes back to the OS
	m := &benchMeter{stop: make(chan struct{}), done: make(chan struct{}), cpu: -processCPU()}
	go m.sample()
	return m
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (m *benchMeter) sample() {
	defer close(m.done)
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(s)
		m.heap = max(m.heap, s[0].Value.Uint64())
		m.total = max(m.total, s[1].Value.Uint64()-s[2].Value.Uint64())
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
	}
}

// report stops the meter, reports its metrics and records the benchmark's
// ns/op and cpu-s/op under name for BenchmarkRenderVsKustomize.
func (m *benchMeter) report(b *testing.B, name string) {
	m.cpu += processCPU()
	close(m.stop)
	<-m.done
	cpu := m.cpu.Seconds() / float64(b.N)
	b.ReportMetric(float64(m.heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(m.total)/(1<<20), "peak-sys-MiB")
	b.ReportMetric(cpu, "cpu-s/op")
	benchNs.Lock()
	defer benchNs.Unlock()
	benchNs.m[name] = benchCost{ns: float64(b.Elapsed().Nanoseconds()) / float64(b.N), cpu: cpu}
}

// BenchmarkLoad parses the generated repository (outside BenchmarkRender's
// timer).
func BenchmarkLoad(b *testing.B) {
	fx := benchFixtures(b)
	b.ReportAllocs()
	var set *load.Set
	meter := startBenchMeter()
	for b.Loop() {
		var err error
		if set, err = load.Load(fx.repo, benchRepoRoot); err != nil {
			b.Fatal(err)
		}
	}
	meter.report(b, "load")
	if err := checkBenchSet(set); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRender is one op = match, schedule and override of all 1,000
// templates for all 100 clusters.
func BenchmarkRender(b *testing.B) {
	fx := benchFixtures(b)
	b.ReportAllocs()
	var res *render.Result
	meter := startBenchMeter()
	for b.Loop() {
		res = render.Render(render.Input{Set: fx.set, Options: render.DefaultOptions()})
	}
	meter.report(b, "render")
	objects, err := checkBenchRender(fx.model, res)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(objects), "objects/op")
}

// BenchmarkKustomizeOverlays is one op = 100 overlay builds with krusty, the
// engine of `kubectl kustomize`, one fresh Kustomizer per build as each
// `kubectl kustomize overlays/<cluster>` would. The first op's output is
// checked with the timer stopped.
func BenchmarkKustomizeOverlays(b *testing.B) {
	fx := benchFixtures(b)
	b.ReportAllocs()
	first, objects := true, 0
	meter := startBenchMeter()
	for b.Loop() {
		for c := range benchClusterCount {
			rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fx.kustomize, fleet.OverlayPath(benchKustomizeRoot, c))
			if err != nil {
				b.Fatalf("failed to build %s: %v", fleet.OverlayPath(benchKustomizeRoot, c), err)
			}
			if first {
				b.StopTimer()
				objects += rm.Size()
				if err := checkBenchKustomize(fx.model, c, rm); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		}
		first = false
	}
	meter.report(b, "kustomize")
	b.ReportMetric(float64(objects), "objects/op")
}

// benchNs keeps the cost each benchmark measured in this process, so that
// BenchmarkRenderVsKustomize compares the numbers `-bench .` has just
// measured rather than building the 100 overlays (minutes) a second time.
var benchNs = struct {
	sync.Mutex
	m map[string]benchCost
}{m: map[string]benchCost{}}

type benchCost struct{ ns, cpu float64 }

func measuredBench(name string) (benchCost, bool) {
	benchNs.Lock()
	defer benchNs.Unlock()
	c, ok := benchNs.m[name]
	return c, ok
}

// BenchmarkRenderVsKustomize compares, within one run on this machine, one
// render of all 100 clusters with the 100 overlay builds. Its ratio line
// reports x-faster-than-kustomize (kustomize ns/op ÷ render ns/op),
// x-faster-incl-load (÷ load + render, since kustomize parses its YAML in
// every build) and x-less-cpu-than-kustomize (the same with cpu-s/op, which
// holds when other work shares the machine). It reuses the results of
// BenchmarkLoad, BenchmarkRender and BenchmarkKustomizeOverlays from the same
// process and runs whichever is missing as a sub-benchmark first, e.g. under
// -bench RenderVsKustomize. Sub-benchmarks rather than testing.Benchmark:
// testing.Benchmark called inside a running benchmark deadlocks on the
// testing package's benchmark lock, which B.Run releases.
func BenchmarkRenderVsKustomize(b *testing.B) {
	benchFixtures(b)
	for _, s := range []struct {
		name string
		f    func(*testing.B)
	}{{"load", BenchmarkLoad}, {"render", BenchmarkRender}, {"kustomize", BenchmarkKustomizeOverlays}} {
		if _, ok := measuredBench(s.name); !ok {
			b.Run(s.name, s.f)
		}
	}
	b.Run("ratio", func(b *testing.B) {
		ld, okL := measuredBench("load")
		rd, okR := measuredBench("render")
		kz, okK := measuredBench("kustomize")
		if !okL || !okR || !okK {
			b.Fatal("load, render or kustomize failed; no ratio")
		}
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(kz.ns/rd.ns, "x-faster-than-kustomize")
		b.ReportMetric(kz.ns/(ld.ns+rd.ns), "x-faster-incl-load")
		b.ReportMetric(kz.cpu/rd.cpu, "x-less-cpu-than-kustomize")
		b.Logf("per op: render %.3fs (%.3fs CPU), load %.3fs (%.3fs CPU), kustomize %.3fs (%.3fs CPU); "+
			"render is %.1fx faster, %.1fx with the load, and uses %.1fx less CPU",
			rd.ns/1e9, rd.cpu, ld.ns/1e9, ld.cpu, kz.ns/1e9, kz.cpu, kz.ns/rd.ns, kz.ns/(ld.ns+rd.ns), kz.cpu/rd.cpu)
	})
}

// BenchmarkFleetOneChange is one op = a render of the 1,000 × 100 fleet
// after one template changed (its replicas): "full" renders every template,
// "memo" reuses what the previous revision rendered (incremental.Memo, as the
// controller does). The ratio line reports memo-percent-of-full (target
// ≤ 1%) and the same for the CPU the renders used (GC included), which
// holds better when other work shares the machine.
func BenchmarkFleetOneChange(b *testing.B) {
	fx := benchFixtures(b)
	t := fx.model.Templates[0]
	file := fleet.TemplateFile(benchRepoRoot, t)
	original, err := fx.repo.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	cache := load.NewCache()
	revision := func(i int) *load.Set {
		changed := strings.Replace(string(original), fmt.Sprintf("replicas: %d", t.Replicas), fmt.Sprintf("replicas: %d", t.Replicas+int64(i%2)), 1)
		if err := fx.repo.WriteFile(file, []byte(changed)); err != nil {
			b.Fatal(err)
		}
		set, err := cache.Load(fx.repo, benchRepoRoot)
		if err != nil {
			b.Fatal(err)
		}
		return set
	}
	defer func() {
		if err := fx.repo.WriteFile(file, original); err != nil {
			b.Fatal(err)
		}
	}()
	ns, cpu := map[string]float64{}, map[string]float64{}
	for _, mode := range []string{"full", "memo"} {
		b.Run(mode, func(b *testing.B) {
			var memo *incremental.Memo
			if mode == "memo" {
				memo = incremental.NewMemo()
				memo.Render(render.Input{Set: revision(1), Options: render.DefaultOptions()})
			}
			i := 0
			var res *render.Result
			var busy time.Duration
			for b.Loop() {
				b.StopTimer()
				set := revision(i)
				i++
				// The next revision's Load (reading 1,000 files from an in-memory
				// filesystem) leaves garbage: collect it untimed, in both modes,
				// so each pays for its own Render's.
				runtime.GC()
				b.StartTimer()
				busy -= processCPU()
				res = rendertest.Render(memo, render.Input{Set: set, Options: render.DefaultOptions()})
				busy += processCPU()
			}
			ns[mode] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			cpu[mode] = busy.Seconds() * 1e3 / float64(b.N)
			b.ReportMetric(cpu[mode], "cpu-ms/op")
			if _, err := checkBenchRender(fx.model, res); err != nil && !strings.Contains(err.Error(), t.Name) {
				b.Fatal(err)
			}
			if memo != nil {
				b.ReportMetric(float64(memo.Rendered), "templates-rendered/op")
				b.ReportMetric(float64(memo.Scheduled), "templates-scheduled/op")
			}
		})
	}
	b.Run("ratio", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(100*ns["memo"]/ns["full"], "memo-percent-of-full")
		b.ReportMetric(100*cpu["memo"]/cpu["full"], "memo-cpu-percent-of-full")
	})
}

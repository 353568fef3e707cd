package render_test

// The render benchmark of issue #3: 1,000 templates, 50 label-selector
// policies, 100 clusters in 4 regions and 3 override rules per template,
// rendered to every cluster; and, in the same run, kustomize building the
// equivalent 100 per-cluster overlays, the way teams do without propagit.
//
//	go test -run '^$' -bench . -benchmem -benchtime 3x ./internal/render/
//
// Both repositories are generated from one deterministic model (benchModel),
// and both outputs are checked against that model, so a broken generator or
// a broken render fails instead of benchmarking nothing.

import (
	"bytes"
	"fmt"
	"path"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

const (
	benchTemplateCount  = 1000
	benchGroupCount     = 50
	benchNamespaceCount = 10
	benchClusterCount   = 100
	benchRegionCount    = 4

	benchRepoRoot      = "/repo"
	benchKustomizeRoot = "/kustomize"

	benchOwnerLabel  = "app.example.com/owner"
	benchWindowAnno  = "ops.example.com/maintenance-window"
	benchWindowValue = "sat-02:00-04:00"
)

// benchPlacements is the placement of group g, by g%5: mostly Duplicated,
// one group in five Divided by static weights inside its home region.
var benchPlacements = []string{"all", "region", "two-regions", "not-region", "divided"}

// benchTemplate is one generated resource template. Deployments are i%10 in
// 0..3, Services 4..6, ConfigMaps 7..9; ten consecutive indexes share a group.
type benchTemplate struct {
	Index, GroupIndex                         int
	Kind, Name, Namespace, Group, Peer, Image string
	Replicas                                  int64
}

// benchGroup is one app-group: its PropagationPolicy and OverridePolicy.
type benchGroup struct {
	Index, home                                      int
	Name, Namespace, Placement, Home, Next, Excluded string
	ImageRegion, AnnotationRegion                    string
}

// benchCluster is one member cluster.
type benchCluster struct{ Name, Region, Tier, SyncMode string }

// benchModel is the scenario both repositories are written from.
type benchModel struct {
	templates []benchTemplate
	byName    map[string]*benchTemplate
	groups    []benchGroup
	clusters  []benchCluster
	// objects is, per cluster index, how many objects it must receive.
	objects []int
}

func benchName(i int) string       { return fmt.Sprintf("app-%04d", i) }
func benchRegion(r int) string     { return fmt.Sprintf("r%d", r%benchRegionCount) }
func benchClusterRegion(c int) int { return c % benchRegionCount }

// benchWeight is the static weight of cluster c: 2 for tier large, else 1.
func benchWeight(c int) int64 {
	if c%3 == 0 {
		return 2
	}
	return 1
}

// benchRegionWeight sums the weights of region r. A Divided Deployment asks
// for k times this, so Webster gives every cluster exactly k times its weight.
func benchRegionWeight(r int) int64 {
	var w int64
	for c := range benchClusterCount {
		if benchClusterRegion(c) == r {
			w += benchWeight(c)
		}
	}
	return w
}

func newBenchModel() *benchModel {
	m := &benchModel{byName: map[string]*benchTemplate{}, objects: make([]int, benchClusterCount)}
	for g := range benchGroupCount {
		h := g % benchRegionCount
		m.groups = append(m.groups, benchGroup{Index: g, home: h, Name: fmt.Sprintf("g%d", g),
			Namespace: fmt.Sprintf("team-%d", g%benchNamespaceCount), Placement: benchPlacements[g%5],
			Home: benchRegion(h), Next: benchRegion(h + 1), Excluded: benchRegion(h + 3),
			ImageRegion: benchRegion(h), AnnotationRegion: benchRegion(h + 1)})
	}
	for c := range benchClusterCount {
		cl := benchCluster{Name: fmt.Sprintf("member-%03d", c), Region: benchRegion(c), Tier: "small", SyncMode: "Push"}
		if benchWeight(c) == 2 {
			cl.Tier = "large"
		}
		if c%2 == 1 {
			cl.SyncMode = "Pull"
		}
		m.clusters = append(m.clusters, cl)
	}
	for i := range benchTemplateCount {
		m.templates = append(m.templates, m.newTemplate(i))
	}
	for i := range m.templates {
		t := &m.templates[i]
		m.byName[t.Name] = t
		for c := range benchClusterCount {
			if m.groups[t.GroupIndex].places(c) {
				m.objects[c]++
			}
		}
	}
	return m
}

func (m *benchModel) newTemplate(i int) benchTemplate {
	g := m.groups[(i/10)%benchGroupCount]
	t := benchTemplate{Index: i, GroupIndex: g.Index, Name: benchName(i), Namespace: g.Namespace, Group: g.Name}
	d := i % 10
	switch {
	case d < 4:
		t.Kind, t.Peer = "Deployment", benchName(i-d+7+d%3)
		t.Image = fmt.Sprintf("registry.example.com/%s/%s:v1.%d.0", t.Namespace, t.Name, i%7)
		t.Replicas = int64(2 + i%3)
		if g.Placement == "divided" {
			t.Replicas = int64(1+i%2) * benchRegionWeight(g.home)
		}
	case d < 7:
		t.Kind, t.Peer = "Service", benchName(i-4)
	default:
		t.Kind, t.Peer = "ConfigMap", benchName(i-7)
	}
	return t
}

// places reports whether the group's policy selects cluster c.
func (g benchGroup) places(c int) bool {
	r := benchClusterRegion(c)
	switch g.Placement {
	case "region", "divided":
		return r == g.home
	case "two-regions":
		return r == g.home || r == (g.home+1)%benchRegionCount
	case "not-region":
		return r != (g.home+3)%benchRegionCount
	}
	return true
}

// benchWant is what cluster c must hold for one template after the three
// override rules: owner labels everywhere, the registry swapped in the home
// region, the maintenance annotation in the next region.
type benchWant struct {
	replicas  int64
	image     string
	annotated bool
}

func (m *benchModel) want(t *benchTemplate, c int) benchWant {
	g := m.groups[t.GroupIndex]
	w := benchWant{replicas: t.Replicas, image: t.Image, annotated: benchRegion(c) == g.AnnotationRegion}
	if g.Placement == "divided" {
		w.replicas = int64(1+t.Index%2) * benchWeight(c)
	}
	if t.Kind == "Deployment" && benchRegion(c) == g.ImageRegion {
		w.image = "registry-" + g.ImageRegion + ".example.com" + t.Image[len("registry.example.com"):]
	}
	return w
}

// benchObject is the part of a rendered object the model predicts.
type benchObject struct {
	kind, name, image   string
	replicas            int64
	labels, annotations map[string]string
}

func benchObjectOf(m map[string]any) benchObject {
	u := unstructured.Unstructured{Object: m}
	o := benchObject{kind: u.GetKind(), name: u.GetName(), labels: u.GetLabels(), annotations: u.GetAnnotations()}
	switch v, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "replicas"); n := v.(type) {
	case int64:
		o.replicas = n
	case int: // kustomize's Map decodes YAML
		o.replicas = int64(n)
	case float64:
		o.replicas = int64(n)
	}
	if cs, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "template", "spec", "containers"); cs != nil {
		if l, ok := cs.([]any); ok && len(l) > 0 {
			if c, ok := l[0].(map[string]any); ok {
				o.image, _ = c["image"].(string)
			}
		}
	}
	return o
}

// check compares what cluster c received with the model: exactly the
// templates of the groups placed there, each with its overrides applied.
func (m *benchModel) check(c int, objs []benchObject) error {
	name := m.clusters[c].Name
	if len(objs) != m.objects[c] {
		return fmt.Errorf("cluster %s got %d objects, want %d", name, len(objs), m.objects[c])
	}
	seen := map[string]bool{}
	for _, o := range objs {
		t := m.byName[o.name]
		if t == nil || t.Kind != o.kind || seen[o.name] || !m.groups[t.GroupIndex].places(c) {
			return fmt.Errorf("cluster %s got unexpected or duplicate %s %s", name, o.kind, o.name)
		}
		seen[o.name] = true
		w := m.want(t, c)
		switch {
		case o.labels[benchOwnerLabel] != t.Namespace:
			return fmt.Errorf("cluster %s: %s %s has label %s=%q, want %q", name, o.kind, o.name, benchOwnerLabel, o.labels[benchOwnerLabel], t.Namespace)
		case (o.annotations[benchWindowAnno] == benchWindowValue) != w.annotated:
			return fmt.Errorf("cluster %s: %s %s annotation %s=%q, want it set: %v", name, o.kind, o.name, benchWindowAnno, o.annotations[benchWindowAnno], w.annotated)
		case t.Kind == "Deployment" && (o.replicas != w.replicas || o.image != w.image):
			return fmt.Errorf("cluster %s: Deployment %s has replicas %d image %q, want %d %q", name, o.name, o.replicas, o.image, w.replicas, w.image)
		}
	}
	return nil
}

// benchFixture holds the generated inputs, built once per process.
type benchFixture struct {
	model     *benchModel
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
	tpl, err := template.ParseGlob("testdata/bench/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("failed to parse the bench templates: %w", err)
	}
	fx := &benchFixture{model: newBenchModel(), repo: filesys.MakeFsInMemory(), kustomize: filesys.MakeFsInMemory()}
	if err := writeBenchRepo(tpl, fx.model, fx.repo); err != nil {
		return nil, err
	}
	if err := writeBenchKustomize(tpl, fx.model, fx.kustomize); err != nil {
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
	if len(set.Findings) > 0 {
		return fmt.Errorf("loading the bench repository found %d problems, first: %s", len(set.Findings), set.Findings[0])
	}
	if len(set.Templates) != benchTemplateCount || len(set.Propagations) != benchGroupCount ||
		len(set.Overrides) != benchGroupCount || len(set.Clusters) != benchClusterCount {
		return fmt.Errorf("loaded %d templates, %d propagation policies, %d override policies, %d clusters; want %d, %d, %d, %d",
			len(set.Templates), len(set.Propagations), len(set.Overrides), len(set.Clusters),
			benchTemplateCount, benchGroupCount, benchGroupCount, benchClusterCount)
	}
	return nil
}

// benchWriter executes named templates into files of one filesystem.
type benchWriter struct {
	tpl *template.Template
	fs  filesys.FileSystem
	buf bytes.Buffer
}

func (w *benchWriter) write(file, name string, data any) error {
	w.buf.Reset()
	if err := w.tpl.ExecuteTemplate(&w.buf, name, data); err != nil {
		return fmt.Errorf("failed to generate %s: %w", file, err)
	}
	if err := w.fs.MkdirAll(path.Dir(file)); err != nil {
		return fmt.Errorf("failed to create the folder of %s: %w", file, err)
	}
	return w.fs.WriteFile(file, bytes.Clone(w.buf.Bytes()))
}

// writeBenchRepo writes the propagit repository: one file per template,
// per policy and per cluster.
func writeBenchRepo(tpl *template.Template, m *benchModel, fs filesys.FileSystem) error {
	w := &benchWriter{tpl: tpl, fs: fs}
	for i := range m.templates {
		t := &m.templates[i]
		if err := w.write(path.Join(benchRepoRoot, "apps", t.Namespace, t.Name+".yaml"), t.Kind, t); err != nil {
			return err
		}
	}
	for _, g := range m.groups {
		dir := path.Join(benchRepoRoot, "policies", g.Namespace)
		if err := w.write(path.Join(dir, "pp-"+g.Name+".yaml"), "PropagationPolicy", g); err != nil {
			return err
		}
		if err := w.write(path.Join(dir, "op-"+g.Name+".yaml"), "OverridePolicy", g); err != nil {
			return err
		}
	}
	for _, c := range m.clusters {
		if err := w.write(path.Join(benchRepoRoot, "clusters", c.Name+".yaml"), "Cluster", c); err != nil {
			return err
		}
	}
	return nil
}

// writeBenchKustomize writes the same scenario without propagit:
//
//	base/<group>/            the group's 20 templates + its owner labels (rule 1)
//	base/                    all 50 groups (1,000 resources)
//	variants/<group>-<r>/    the group for one region: images: (rule 2) or
//	                         commonAnnotations: (rule 3)
//	overlays/<cluster>/      the groups placed on the cluster, through the
//	                         cluster's region variant, + replicas: for Divided
//
// It approximates the policies rather than equals them. The placement and the
// Webster replica split are worked out by hand here (by the generator) and
// frozen into each overlay's resource list and replicas:, which is exactly
// what a team without a scheduler does; commonAnnotations also writes the pod
// template's annotations, which Karmada's annotationsOverrider does not. The
// comparison stays fair because each overlay builds the same objects, with the
// same edited fields, as propagit's Work for that cluster (both outputs are
// checked against one model), and kustomize is not asked to do anything the
// render skips; propagit additionally matches policies, schedules, stamps and
// prunes. Overlays reference per-group bases rather than the whole base:
// shipping all 1,000 templates to every cluster would give kustomize more
// objects to build than propagit renders.
func writeBenchKustomize(tpl *template.Template, m *benchModel, fs filesys.FileSystem) error {
	w := &benchWriter{tpl: tpl, fs: fs}
	root := benchKustomizeRoot
	groupDirs := make([]string, 0, benchGroupCount)
	for _, g := range m.groups {
		if err := writeBenchKustomizeGroup(w, m, g); err != nil {
			return err
		}
		groupDirs = append(groupDirs, g.Name)
	}
	if err := w.write(root+"/base/kustomization.yaml", "base", map[string]any{"Files": groupDirs}); err != nil {
		return err
	}
	for c := range m.clusters {
		if err := w.write(benchOverlayPath(c)+"/kustomization.yaml", "overlay", m.overlay(c)); err != nil {
			return err
		}
	}
	return nil
}

func writeBenchKustomizeGroup(w *benchWriter, m *benchModel, g benchGroup) error {
	root := benchKustomizeRoot
	var files []string
	type image struct{ Name, NewName string }
	var images []image
	for i := range m.templates {
		t := &m.templates[i]
		if t.GroupIndex != g.Index {
			continue
		}
		files = append(files, t.Name+".yaml")
		if err := w.write(path.Join(root, "base", g.Name, t.Name+".yaml"), t.Kind, t); err != nil {
			return err
		}
		if t.Kind == "Deployment" {
			repo := t.Image[:strings.LastIndexByte(t.Image, ':')]
			images = append(images, image{Name: repo, NewName: "registry-" + g.ImageRegion + ".example.com" + repo[len("registry.example.com"):]})
		}
	}
	base := map[string]any{"Files": files, "Labels": true, "Namespace": g.Namespace}
	if err := w.write(path.Join(root, "base", g.Name, "kustomization.yaml"), "base", base); err != nil {
		return err
	}
	img := map[string]any{"Group": g.Name, "Images": images}
	if err := w.write(path.Join(root, "variants", g.Name+"-"+g.ImageRegion, "kustomization.yaml"), "variant", img); err != nil {
		return err
	}
	anno := map[string]any{"Group": g.Name, "Annotate": true}
	return w.write(path.Join(root, "variants", g.Name+"-"+g.AnnotationRegion, "kustomization.yaml"), "variant", anno)
}

func benchOverlayPath(c int) string {
	return fmt.Sprintf("%s/overlays/member-%03d", benchKustomizeRoot, c)
}

// overlay is the kustomization data of cluster c.
func (m *benchModel) overlay(c int) map[string]any {
	type replicas struct {
		Name  string
		Count int64
	}
	var resources []string
	var reps []replicas
	region := benchRegion(c)
	for _, g := range m.groups {
		if !g.places(c) {
			continue
		}
		switch region {
		case g.ImageRegion, g.AnnotationRegion:
			resources = append(resources, "../../variants/"+g.Name+"-"+region)
		default:
			resources = append(resources, "../../base/"+g.Name)
		}
	}
	for i := range m.templates {
		t := &m.templates[i]
		if t.Kind == "Deployment" && m.groups[t.GroupIndex].Placement == "divided" && m.groups[t.GroupIndex].places(c) {
			reps = append(reps, replicas{Name: t.Name, Count: m.want(t, c).replicas})
		}
	}
	return map[string]any{"Resources": resources, "Replicas": reps}
}

func checkBenchKustomize(m *benchModel, c int, rm resmap.ResMap) error {
	objs := make([]benchObject, 0, rm.Size())
	for _, r := range rm.Resources() {
		u, err := r.Map()
		if err != nil {
			return fmt.Errorf("failed to read a kustomize resource of cluster %d: %w", c, err)
		}
		objs = append(objs, benchObjectOf(u))
	}
	return m.check(c, objs)
}

func checkBenchRender(m *benchModel, res *render.Result) (int, error) {
	if len(res.Works) != benchClusterCount {
		return 0, fmt.Errorf("render produced Works for %d clusters, want %d", len(res.Works), benchClusterCount)
	}
	total := 0
	for c, work := range res.Works {
		if work.Cluster != m.clusters[c].Name {
			return 0, fmt.Errorf("Work %d is for cluster %q, want %q", c, work.Cluster, m.clusters[c].Name)
		}
		objs := make([]benchObject, 0, len(work.Objects))
		for _, o := range work.Objects {
			objs = append(objs, benchObjectOf(o.Object))
		}
		if err := m.check(c, objs); err != nil {
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
			rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fx.kustomize, benchOverlayPath(c))
			if err != nil {
				b.Fatalf("failed to build %s: %v", benchOverlayPath(c), err)
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

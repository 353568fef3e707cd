//go:build unix

package cli

// The diff benchmark of issue #4: two revisions of a generated repository
// with 1,000 templates and 20 clusters, 10 templates changed between them.
// In the same iterations it times rendering both revisions (load + render,
// no Git and no comparison) and reports the full diff as a ratio of that,
// in wall-clock and in CPU time.
//
//	go test -run '^$' -bench BenchmarkDiff -benchtime 5x ./internal/cli/

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

const (
	benchDiffTemplates = 1000
	benchDiffClusters  = 20
	benchDiffGroups    = 50
	benchDiffChanged   = 10
)

// benchDiffFleet returns the files of the generated fleet; version 1 bumps
// the image (or data) of the first benchDiffChanged templates.
func benchDiffFleet(version int) map[string]string {
	files := map[string]string{}
	for c := 0; c < benchDiffClusters; c++ {
		files[fmt.Sprintf("fleet/clusters/c%02d.yaml", c)] = fmt.Sprintf(
			"apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c%02d\n  labels:\n    region: r%d\nspec:\n  syncMode: Push\n",
			c, c%4)
	}
	for n := 0; n < 10; n++ {
		files[fmt.Sprintf("fleet/namespaces/ns%d.yaml", n)] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns%d\n", n)
	}
	for g := 0; g < benchDiffGroups; g++ {
		files[fmt.Sprintf("fleet/policies/g%02d.yaml", g)] = benchDiffPolicy(g)
	}
	files["fleet/policies/region-label.yaml"] = benchDiffOverride
	for i := 0; i < benchDiffTemplates; i++ {
		v := 0
		if i < benchDiffChanged {
			v = version
		}
		files[fmt.Sprintf("fleet/apps/g%02d/t%04d.yaml", i%benchDiffGroups, i)] = benchDiffTemplate(i, v)
	}
	return files
}

// benchDiffTemplate is a Deployment, a Service or a ConfigMap of group
// i%benchDiffGroups, in namespace ns(group%10).
func benchDiffTemplate(i, version int) string {
	g := i % benchDiffGroups
	meta := fmt.Sprintf("metadata:\n  name: t%04d\n  namespace: ns%d\n  labels:\n    group: g%02d\n", i, g%10, g)
	switch i % 3 {
	case 0:
		return "apiVersion: apps/v1\nkind: Deployment\n" + meta + fmt.Sprintf(`spec:
  replicas: 6
  selector:
    matchLabels: {app: t%04d}
  template:
    metadata:
      labels: {app: t%04[1]d}
    spec:
      containers:
      - name: app
        image: registry.example.com/t%04[1]d:1.%d.0
        resources:
          requests: {cpu: 100m, memory: 128Mi}
`, i, version)
	case 1:
		return "apiVersion: v1\nkind: Service\n" + meta + fmt.Sprintf("spec:\n  selector: {app: t%04d}\n  ports:\n  - port: %d\n", i, 80+version)
	}
	return "apiVersion: v1\nkind: ConfigMap\n" + meta + fmt.Sprintf("data:\n  config.yaml: |\n    level: info\n    version: %d\n", version)
}

// benchDiffPolicy places group g: Divided by region weights, Duplicated to
// every cluster, or Duplicated to five named clusters, by g%3.
func benchDiffPolicy(g int) string {
	head := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: g%02d
  namespace: ns%d
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector: {matchLabels: {group: g%02[1]d}}
  - apiVersion: v1
    kind: Service
    labelSelector: {matchLabels: {group: g%02[1]d}}
  - apiVersion: v1
    kind: ConfigMap
    labelSelector: {matchLabels: {group: g%02[1]d}}
  placement:
`, g, g%10)
	switch g % 3 {
	case 0:
		return head + `    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {labelSelector: {matchLabels: {region: r0}}}, weight: 1}
        - {targetCluster: {labelSelector: {matchLabels: {region: r1}}}, weight: 2}
        - {targetCluster: {labelSelector: {matchLabels: {region: r2}}}, weight: 3}
`
	case 1:
		return head + "    replicaScheduling: {replicaSchedulingType: Duplicated}\n"
	}
	names := make([]string, 5)
	for k := range names {
		names[k] = fmt.Sprintf("c%02d", (g+k*3)%benchDiffClusters)
	}
	return head + "    clusterAffinity:\n      clusterNames: [" + strings.Join(names, ", ") + "]\n"
}

const benchDiffOverride = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata:
  name: region-label
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {region: r1}}}
    overriders:
      labelsOverrider:
      - operator: add
        value: {topology.example.com/region: r1}
`

// benchDiffRepo commits both versions of the fleet and tags them.
func benchDiffRepo(b *testing.B) string {
	dir := b.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		b.Fatal(err)
	}
	c := &committer{t: b, dir: dir, repo: repo}
	c.commit("bench-base", benchDiffFleet(0))
	c.commit("bench-head", benchDiffFleet(1))
	return dir
}

// renderTwice loads and renders both versions from memory, the way diff
// does once Git has been read.
func renderTwice(b *testing.B, base, head filesys.FileSystem) {
	sets := make([]*load.Set, 2)
	for i, fs := range []filesys.FileSystem{base, head} {
		set, err := load.Load(fs, "/fleet")
		if err != nil {
			b.Fatal(err)
		}
		sets[i] = set
	}
	res := render.Render(render.Input{Set: sets[0], Options: render.DefaultOptions()})
	render.Render(render.Input{Set: sets[1], Options: render.DefaultOptions(), Previous: render.PreviousFromWorks(res.Works)})
}

func memFleet(b *testing.B, files map[string]string) filesys.FileSystem {
	fs := filesys.MakeFsInMemory()
	for p, content := range files {
		if err := fs.WriteFile("/"+p, []byte(content)); err != nil {
			b.Fatal(err)
		}
	}
	return fs
}

func BenchmarkDiff(b *testing.B) {
	dir := benchDiffRepo(b)
	baseFS, headFS := memFleet(b, benchDiffFleet(0)), memFleet(b, benchDiffFleet(1))
	args := []string{"diff", dir + "//fleet", "--base", "bench-base", "--head", "bench-head", "-o", "json", "--exit-code"}
	checkBenchDiff(b, args)
	renderTwice(b, baseFS, headFS) // warm up
	// Rendering twice is timed in the same iterations as the diff, so both
	// see the same load on a shared machine; CPU time is reported too, as
	// it does not depend on that load.
	var renderWall, renderCPU, diffCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w, c := time.Now(), cpuTime()
		renderTwice(b, baseFS, headFS)
		renderWall += time.Since(w)
		renderCPU += cpuTime() - c
		b.StartTimer()
		c = cpuTime()
		cmd := NewRootCommand(io.Discard, io.Discard)
		cmd.SetArgs(args)
		if err, ok := cmd.Execute().(*ExitError); !ok || err.Code != 1 {
			b.Fatalf("diff: %v, want exit 1 (differences)", err)
		}
		diffCPU += cpuTime() - c
	}
	b.StopTimer()
	b.ReportMetric(float64(renderWall.Milliseconds())/float64(b.N), "render-twice-ms")
	b.ReportMetric(float64(b.Elapsed())/float64(renderWall), "x-render-twice")
	b.ReportMetric(float64(diffCPU.Milliseconds())/float64(b.N), "diff-cpu-ms")
	b.ReportMetric(float64(diffCPU)/float64(renderCPU), "x-render-twice-cpu")
}

// cpuTime is the CPU time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkBenchDiff runs the diff once and checks that exactly the changed
// templates differ, and nothing is added or removed, so a broken generator
// fails instead of benchmarking nothing.
func checkBenchDiff(b *testing.B, args []string) {
	var out bytes.Buffer
	cmd := NewRootCommand(&out, io.Discard)
	cmd.SetArgs(args)
	if err, ok := cmd.Execute().(*ExitError); !ok || err.Code != 1 {
		b.Fatalf("diff: %v, want exit 1 (differences)", err)
	}
	var r diff.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		b.Fatal(err)
	}
	templates := map[string]bool{}
	objects := 0
	for _, c := range r.Clusters {
		if c.Added+c.Removed != 0 {
			b.Fatalf("cluster %s: %d added, %d removed, want only changes", c.Name, c.Added, c.Removed)
		}
		for _, o := range c.Objects {
			templates[o.Template] = true
			objects++
		}
	}
	if len(templates) != benchDiffChanged || len(r.Clusters) != benchDiffClusters {
		b.Fatalf("%d templates differ on %d clusters, want %d on %d", len(templates), len(r.Clusters), benchDiffChanged, benchDiffClusters)
	}
	b.Logf("%d objects differ across %d clusters (%d templates)", objects, len(r.Clusters), len(templates))
}

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/works/folder"
)

// BenchmarkRenderOutVsKustomize measures, side by side in one run on the
// 1,000 templates × 100 clusters fleet (e2e/fleet) written to disk, what a
// team runs to get every cluster's manifests into files:
//   - render-out: `propagit render --source repo --out DIR` end to end
//     (load, match, schedule, override, encode, write), in process;
//   - render-out-cluster: the same with --layout cluster, one file per
//     cluster as the overlays below write, not one per object;
//   - krusty: the 100 per-cluster overlays built with kustomize's engine in
//     process and each written to a file (no process start-up, kustomize's
//     best case);
//   - kubectl-kustomize: `kubectl kustomize overlays/<cluster> > file` for
//     each cluster, when kubectl is on PATH;
//   - write-files: writing render-out's files alone, bytes in memory, to a
//     fresh folder on as many workers: the floor this disk sets under
//     render-out. It moves a lot: ext4 without a journal skips inodes freed
//     in the last minutes when it allocates one, so right after a large
//     delete (another benchmark's temp folder) each new file costs up to
//     ten times more.
//
// With -benchtime 1x render-out writes into an empty folder; from the
// second op on it replaces its previous render, linking the unchanged files.
//
// Both outputs are checked against the fleet model. The ratio sub-benchmark
// reports x-faster (wall) and x-less-cpu (user+system CPU, which holds when
// other work shares the machine) for each kustomize variant.
//
//	go test ./internal/cli/ -run '^$' -bench RenderOutVsKustomize -benchtime 1x -timeout 30m
func BenchmarkRenderOutVsKustomize(b *testing.B) {
	m, err := fleet.New(1000, 100)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	fs := filesys.MakeFsOnDisk()
	repo, kdir := filepath.Join(dir, "repo"), filepath.Join(dir, "kustomize")
	if err := m.WriteRepo(fs, repo); err != nil {
		b.Fatal(err)
	}
	if err := m.WriteKustomize(fs, kdir); err != nil {
		b.Fatal(err)
	}
	costs := map[string]benchCost{}
	// renderOut runs render --out into dir/name with the layout, keeping its
	// cost as costs[cost], and checks every cluster's files.
	renderOut := func(name, layout, cost string) func(*testing.B) {
		return func(b *testing.B) {
			out := filepath.Join(dir, name)
			start := startCost()
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				cmd := NewRootCommand(&stdout, &stderr)
				cmd.SetArgs([]string{"render", "--source", repo, "--out", out, "--layout", layout})
				if err := cmd.Execute(); err != nil {
					b.Fatalf("render: %v\n%s", err, stderr.String())
				}
			}
			costs[cost] = start.stop(b)
			for c := range m.Clusters {
				checkFiles(b, m, c, filepath.Join(out, m.Clusters[c].Name))
			}
		}
	}
	b.Run("render-out", renderOut("rendered", folder.LayoutObject, "render"))
	// The same with one file per cluster, as the overlays write.
	b.Run("render-out-cluster", renderOut("rendered-cluster", folder.LayoutCluster, "render-cluster"))
	b.Run("write-files", func(b *testing.B) {
		// The floor under render-out on this disk: writing the files it
		// wrote, bytes already in memory, fresh, on as many workers.
		files := readBenchTree(b, filepath.Join(dir, "rendered"))
		start := startCost()
		for i := 0; b.Loop(); i++ {
			out := filepath.Join(dir, fmt.Sprintf("write-files-%d", i))
			err := parallel.Each(len(files), func(j int) error {
				d := filepath.Join(out, files[j].dir)
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
				for _, f := range files[j].files {
					if err := os.WriteFile(filepath.Join(d, f.name), f.data, 0o644); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		costs["write-files"] = start.stop(b)
		n := 0
		for _, d := range files {
			n += len(d.files)
		}
		b.ReportMetric(costs["write-files"].wall/float64(n)*1e6, "µs-wall/file")
		b.ReportMetric(costs["write-files"].cpu/float64(n)*1e6, "µs-cpu/file")
	})
	b.Run("krusty", func(b *testing.B) {
		out := filepath.Join(dir, "krusty")
		start := startCost()
		for b.Loop() {
			for c := range m.Clusters {
				rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, fleet.OverlayPath(kdir, c))
				if err != nil {
					b.Fatal(err)
				}
				y, err := rm.AsYaml()
				if err != nil {
					b.Fatal(err)
				}
				writeBenchFile(b, filepath.Join(out, m.Clusters[c].Name, "all.yaml"), y)
			}
		}
		costs["krusty"] = start.stop(b)
		for c := range m.Clusters {
			checkFiles(b, m, c, filepath.Join(out, m.Clusters[c].Name))
		}
	})
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		b.Run("kubectl-kustomize", func(b *testing.B) {
			out := filepath.Join(dir, "kubectl")
			start := startCost()
			for b.Loop() {
				for c := range m.Clusters {
					var y bytes.Buffer
					cmd := exec.Command(kubectl, "kustomize", fleet.OverlayPath(kdir, c))
					cmd.Stdout = &y
					if err := cmd.Run(); err != nil {
						b.Fatalf("kubectl kustomize: %v", err)
					}
					writeBenchFile(b, filepath.Join(out, m.Clusters[c].Name, "all.yaml"), y.Bytes())
				}
			}
			costs["kubectl"] = start.stop(b)
			checkFiles(b, m, 0, filepath.Join(out, m.Clusters[0].Name))
		})
	}
	b.Run("ratio", func(b *testing.B) {
		r, ok := costs["render"]
		if !ok {
			b.Fatal("render-out did not run")
		}
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op")
		if f, ok := costs["write-files"]; ok {
			b.ReportMetric(r.wall/f.wall, "x-write-files-floor")
			b.Logf("per op: writing the same files alone %.2fs wall %.2fs CPU: render --out takes %.1fx that", f.wall, f.cpu, r.wall/f.wall)
		}
		rc := costs["render-cluster"]
		for _, name := range []string{"krusty", "kubectl"} {
			if k, ok := costs[name]; ok {
				b.ReportMetric(k.wall/r.wall, "x-faster-than-"+name)
				b.ReportMetric(k.cpu/r.cpu, "x-less-cpu-than-"+name)
				b.Logf("per op: render --out %.2fs wall %.2fs CPU; %s %.2fs wall %.2fs CPU: %.0fx faster, %.0fx less CPU",
					r.wall, r.cpu, name, k.wall, k.cpu, k.wall/r.wall, k.cpu/r.cpu)
				if rc.wall > 0 {
					b.ReportMetric(k.wall/rc.wall, "x-faster-than-"+name+"-cluster-layout")
					b.Logf("per op: render --out --layout cluster %.2fs wall %.2fs CPU: %.0fx faster than %s, %.0fx less CPU",
						rc.wall, rc.cpu, k.wall/rc.wall, name, k.cpu/rc.cpu)
				}
			}
		}
	})
}

// benchCost is the wall and CPU seconds of one op.
type benchCost struct{ wall, cpu float64 }

type costStart struct {
	at  time.Time
	cpu time.Duration
}

func startCost() costStart { return costStart{at: time.Now(), cpu: cpuUsed()} }

func (s costStart) stop(b *testing.B) benchCost {
	c := benchCost{wall: time.Since(s.at).Seconds() / float64(b.N), cpu: (cpuUsed() - s.cpu).Seconds() / float64(b.N)}
	b.ReportMetric(c.cpu, "cpu-s/op")
	return c
}

// cpuUsed is the user+system CPU of this process and its waited-for
// children (kubectl).
func cpuUsed() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

func writeBenchFile(b *testing.B, file string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// checkFiles checks the YAML files under dir, one object or a stream each,
// against what the model says cluster c receives.
func checkFiles(b *testing.B, m *fleet.Model, c int, dir string) {
	b.Helper()
	var objs []map[string]any
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Check(c, objs); err != nil {
		b.Fatal(err)
	}
}

// benchDir is one folder of a tree read into memory.
type benchDir struct {
	dir   string
	files []struct {
		name string
		data []byte
	}
}

// readBenchTree reads the files under root, by folder.
func readBenchTree(b *testing.B, root string) []benchDir {
	b.Helper()
	var dirs []benchDir
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if len(dirs) == 0 || dirs[len(dirs)-1].dir != rel {
			dirs = append(dirs, benchDir{dir: rel})
		}
		last := &dirs[len(dirs)-1]
		last.files = append(last.files, struct {
			name string
			data []byte
		}{d.Name(), data})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return dirs
}

package controller

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// BenchmarkSteadyState runs the controller's render pass (load through its
// cache, render through its memo, encode every cluster's Work) on the
// 10,000 templates × 100 clusters fleet, as for push members: two passes,
// then a commit that changes one template. It reports the live heap the
// controller then holds between passes (the loader's cache, the memo, the
// recorded Works and their objects), the time of a full pass and of the
// one-template pass (load, render, encode, history) and the Works it
// changed, and checks that it rendered one template. (An unchanged revision is not loaded at all.) Member connections, store clients and informers are not in
// it (no members are contacted).
//
//	go test ./internal/controller/ -run '^$' -bench SteadyState -benchtime 1x
func BenchmarkSteadyState(b *testing.B) {
	const templates, clusters = 10000, 100
	m, err := fleet.New(templates, clusters)
	if err != nil {
		b.Fatal(err)
	}
	fs := filesys.MakeFsInMemory()
	if err := m.WriteRepo(fs, "/repo"); err != nil {
		b.Fatal(err)
	}
	t := m.Templates[0]
	file := fleet.TemplateFile("/repo", t)
	original, err := fs.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c := New(DefaultOptions(), nil, nil, nil, nil, logr.Discard())
		c.recorded = newRecording(nil, nil, nil) // an empty works store
		pass := func(revision string) []*workv1alpha1.Work { return renderPass(b, c, fs, revision) }
		pass("r1")
		// The second pass has the first one's placement as history, as
		// every pass after a controller's first has: with that new input
		// it renders every template again, a full pass.
		start := time.Now()
		before := pass("r2")
		full := time.Since(start)
		b.ReportMetric(float64(full.Milliseconds()), "full-pass-ms")
		changed := strings.Replace(string(original), fmt.Sprintf("replicas: %d", t.Replicas), fmt.Sprintf("replicas: %d", t.Replicas+1), 1)
		if err := fs.WriteFile(file, []byte(changed)); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		after := pass("r3")
		one := time.Since(start)
		b.ReportMetric(float64(one.Milliseconds()), "one-change-ms")
		b.ReportMetric(100*one.Seconds()/full.Seconds(), "one-change-percent-of-full")
		if c.memo.Rendered != 1 {
			b.Errorf("a one-template commit rendered %d templates, want 1", c.memo.Rendered)
		}
		// Only the Works of the clusters that receive the template change.
		diff, receive := 0, 0
		for i := range before {
			changed := workv1alpha1.Digest(before[i]) != workv1alpha1.Digest(after[i])
			holds := holdsTemplate(before[i], t.Name, t.Namespace) || holdsTemplate(after[i], t.Name, t.Namespace)
			if changed {
				diff++
			}
			if holds {
				receive++
			}
			if changed && !holds {
				b.Errorf("the Work of %s changed, but it does not hold %s/%s", before[i].Spec.Cluster, t.Namespace, t.Name)
			}
		}
		if diff == 0 {
			b.Error("the one-template commit changed no Work")
		}
		b.ReportMetric(float64(receive), "works-holding-it")
		b.ReportMetric(float64(diff), "works-changed")
		before, after = nil, nil
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
		runtime.KeepAlive(c)
		if err := fs.WriteFile(file, original); err != nil {
			b.Fatal(err)
		}
	}
}

// holdsTemplate reports whether w has a manifest named namespace/name.
func holdsTemplate(w *workv1alpha1.Work, name, namespace string) bool {
	n, ns := []byte(`"name":"`+name+`"`), []byte(`"namespace":"`+namespace+`"`)
	for _, m := range w.Spec.Manifests {
		if bytes.Contains(m.Raw, n) && bytes.Contains(m.Raw, ns) {
			return true
		}
	}
	return false
}

// renderPass is the controller's pass from load to the Works it would
// record, on the folder fs at /repo, read as revision, remembered as
// recorded: what the benchmarks time, without a works store or members.
func renderPass(b *testing.B, c *Controller, fs filesys.FileSystem, revision string) []*workv1alpha1.Work {
	b.Helper()
	set, err := c.files.Load(fs, "/repo")
	if err != nil {
		b.Fatal(err)
	}
	cur := &loaded{revision: revision, set: set, interp: set.Interpreter()}
	ws, rec, err := c.renderWorks(context.Background(), cur, nil)
	if err != nil {
		b.Fatal(err)
	}
	c.recorded, c.last = rec, cur
	return ws
}

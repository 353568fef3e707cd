package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/works/workstest"
)

// stableSource hands the controller the stable revision's folder.
type stableSource struct{ fs filesys.FileSystem }

func (s stableSource) Fetch(context.Context) (Snapshot, error) {
	return Snapshot{}, fmt.Errorf("not used")
}
func (s stableSource) ReadRevision(_ context.Context, rev string) (Snapshot, error) {
	return Snapshot{Revision: rev, FS: s.fs, Root: "/repo"}, nil
}

// BenchmarkRolloutPassCost measures what a RolloutPolicy adds to the
// controller's render pass, side by side on one fleet (2,000 templates × 8
// clusters): the pass of a one-template commit with no RolloutPolicy, and
// with one governing every template in three waves (the commit's rollout
// gives the canary the change and holds the 7 others on the stable
// revision, which it renders from that commit); and a pass with nothing
// new while that rollout waits (a soak re-check). It reports each time and
// the ratio with / without.
//
//	go test ./internal/controller/ -run '^$' -bench RolloutPassCost -benchtime 3x
func BenchmarkRolloutPassCost(b *testing.B) {
	const templates, clusters = 2000, 8
	m, err := fleet.New(templates, clusters)
	if err != nil {
		b.Fatal(err)
	}
	policy := fmt.Sprintf(`apiVersion: propagit.io/v1alpha1
kind: RolloutPolicy
metadata: {name: all}
spec:
  waves:
  - {name: canary, clusterAffinity: {clusterNames: [%s]}, soakTime: 10m}
  - {name: next, clusterAffinity: {clusterNames: [%s, %s]}}
`, fleet.ClusterName(0), fleet.ClusterName(1), fleet.ClusterName(2))
	run := func(withPolicy bool) (oneChange, recheck time.Duration, held int) {
		fs, stable := filesys.MakeFsInMemory(), filesys.MakeFsInMemory()
		for _, f := range []filesys.FileSystem{fs, stable} {
			if err := m.WriteRepo(f, "/repo"); err != nil {
				b.Fatal(err)
			}
		}
		store := workstest.NewStore()
		c := New(DefaultOptions(), stableSource{stable}, store, store, nil, logr.Discard())
		c.recorded = newRecording(nil, nil, nil)
		pass := func(revision string) {
			ws := renderPass(b, c, fs, revision)
			held = 0
			for _, w := range ws {
				if w.Annotations["propagit.io/rollout-held"] != "" {
					held++
				}
			}
		}
		pass("r1")
		pass("r2")
		if withPolicy {
			for _, f := range []filesys.FileSystem{fs, stable} {
				if err := f.WriteFile("/repo/rollout.yaml", []byte(policy)); err != nil {
					b.Fatal(err)
				}
			}
		}
		pass("r3") // the policy arrives, changing nothing: the stable revision
		t := m.Templates[0]
		file := fleet.TemplateFile("/repo", t)
		data, err := fs.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		changed := strings.Replace(string(data), fmt.Sprintf("replicas: %d", t.Replicas), fmt.Sprintf("replicas: %d", t.Replicas+1), 1)
		if err := fs.WriteFile(file, []byte(changed)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		pass("r4")
		oneChange = time.Since(start)
		start = time.Now()
		pass("r4")
		recheck = time.Since(start)
		return oneChange, recheck, held
	}
	for b.Loop() {
		plainOne, plainRecheck, plainHeld := run(false)
		rollOne, rollRecheck, rollHeld := run(true)
		if plainHeld != 0 || rollHeld != clusters-1 {
			b.Fatalf("held Works: %d without a policy (want 0), %d with (want %d)", plainHeld, rollHeld, clusters-1)
		}
		b.ReportMetric(float64(plainOne.Microseconds())/1000, "one-change-ms")
		b.ReportMetric(float64(rollOne.Microseconds())/1000, "one-change-rollout-ms")
		b.ReportMetric(rollOne.Seconds()/plainOne.Seconds(), "one-change-ratio")
		b.ReportMetric(float64(plainRecheck.Microseconds())/1000, "recheck-ms")
		b.ReportMetric(float64(rollRecheck.Microseconds())/1000, "recheck-rollout-ms")
		b.ReportMetric(rollRecheck.Seconds()/plainRecheck.Seconds(), "recheck-ratio")
	}
}

package gitstore

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkPutHTTP: one Put of 3 clusters × 100 objects, every one changed,
// over smart HTTP: fetch, build, commit, push.
func BenchmarkPutHTTP(b *testing.B) {
	r := httpRemote(b)
	g := r.store(b)
	ctx := ctxT(b)
	if _, err := g.Put(ctx, "warm", fleet(3, 100, "warm", "warm")); err != nil {
		b.Fatal(err)
	}
	pushes := r.Srv.Pushes()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rev := fmt.Sprintf("rev%d", i)
		changed, err := g.Put(ctx, rev, fleet(3, 100, rev, rev))
		if err != nil || len(changed) != 3 {
			b.Fatalf("Put = %v, %v", changed, err)
		}
	}
	b.ReportMetric(float64(r.Srv.Pushes()-pushes)/float64(b.N), "pushes/op")
}

// BenchmarkPutUnchangedHTTP: a Put that changes nothing: one up-to-date
// fetch, no commit, no push.
func BenchmarkPutUnchangedHTTP(b *testing.B) {
	r := httpRemote(b)
	g := r.store(b)
	ctx := ctxT(b)
	ws := fleet(3, 100, "rev", "v")
	if _, err := g.Put(ctx, "rev", ws); err != nil {
		b.Fatal(err)
	}
	pushes := r.Srv.Pushes()
	for b.Loop() {
		if changed, err := g.Put(ctx, "rev", ws); err != nil || len(changed) != 0 {
			b.Fatalf("Put = %v, %v", changed, err)
		}
	}
	if r.Srv.Pushes() != pushes {
		b.Errorf("an unchanged Put pushed")
	}
}

// BenchmarkPutStatusHTTP: sequential status transitions of one cluster.
func BenchmarkPutStatusHTTP(b *testing.B) {
	r := httpRemote(b)
	g := r.store(b)
	ctx := ctxT(b)
	for i := 0; b.Loop(); i++ {
		if err := g.PutStatus(ctx, "m", testStatus(fmt.Sprintf("rev%d", i), metav1.ConditionTrue, t0)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutStatusUnchanged: a heartbeat-only report, the steady state of
// an agent: no network call.
func BenchmarkPutStatusUnchanged(b *testing.B) {
	r := httpRemote(b)
	g := r.store(b)
	ctx := ctxT(b)
	if err := g.PutStatus(ctx, "m", testStatus("rev", metav1.ConditionTrue, t0)); err != nil {
		b.Fatal(err)
	}
	requests := r.Srv.RefAdvertisements()
	for i := 0; b.Loop(); i++ {
		if err := g.PutStatus(ctx, "m", testStatus("rev", metav1.ConditionTrue, t0.Add(time.Duration(i)*time.Second))); err != nil {
			b.Fatal(err)
		}
	}
	if n := r.Srv.RefAdvertisements() - requests; n != 0 {
		b.Errorf("heartbeat-only reports made %d requests", n)
	}
}

// BenchmarkListCluster: what one agent downloads when another cluster's
// Work changed, with 10 and 200 clusters on the branch (20 objects each).
func BenchmarkListCluster(b *testing.B) {
	for _, n := range []int{10, 200} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			r := httpRemote(b)
			ctrl, agent := r.store(b), r.store(b)
			ctx := ctxT(b)
			if _, err := ctrl.Put(ctx, "rev", fleet(n, 20, "rev", "v")); err != nil {
				b.Fatal(err)
			}
			before := r.Srv.BytesSent()
			if _, err := agent.ListCluster(ctx, "c0"); err != nil {
				b.Fatal(err)
			}
			first := r.Srv.BytesSent() - before
			// Every cluster has a status ref: each ref listing names them all.
			for c := range n {
				if err := ctrl.PutStatus(ctx, fmt.Sprintf("c%d", c), testStatus("rev", metav1.ConditionTrue, t0)); err != nil {
					b.Fatal(err)
				}
			}
			before = r.Srv.BytesSent()
			if _, err := agent.ListCluster(ctx, "c0"); err != nil {
				b.Fatal(err)
			}
			unchanged := r.Srv.BytesSent() - before
			var bytes int64
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ws := fleet(n, 20, "rev", "v")
				ws[n-1] = fleet(n, 20, "rev", fmt.Sprint(i))[n-1] // another cluster changed
				if _, err := ctrl.Put(ctx, "rev", ws); err != nil {
					b.Fatal(err)
				}
				before := r.Srv.BytesSent()
				b.StartTimer()
				if _, err := agent.ListCluster(ctx, "c0"); err != nil {
					b.Fatal(err)
				}
				bytes += r.Srv.BytesSent() - before
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "B-fetched/op")
			b.ReportMetric(float64(first), "first-fetch-B")
			b.ReportMetric(float64(unchanged), "unchanged-poll-B")
		})
	}
}

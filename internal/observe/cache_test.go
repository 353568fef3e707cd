package observe

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

func TestProbeCacheReusesOnlyFreshResultsOfTheSameCluster(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1", ResourceVersion: "1"}}
	st := &clusterv1alpha1.ClusterStatus{}
	var p probeCache
	if _, ok := p.recent(cl, t0, 10*time.Second); ok {
		t.Fatal("a result before any probe")
	}
	p.keep(cl, st, t0)
	if got, ok := p.recent(cl, t0.Add(9*time.Second), 10*time.Second); !ok || got != st {
		t.Fatal("a 9 s old result was not reused with a 10 s interval")
	}
	if _, ok := p.recent(cl, t0.Add(10*time.Second), 10*time.Second); ok {
		t.Fatal("a result as old as the interval was reused")
	}
	if _, ok := p.recent(cl, t0, 0); ok {
		t.Fatal("interval 0 must probe every pass")
	}
	changed := cl.DeepCopy()
	changed.ResourceVersion = "2"
	if _, ok := p.recent(changed, t0.Add(time.Second), 10*time.Second); ok {
		t.Fatal("a changed Cluster object reused the old result")
	}
}

package agent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/workstest"
)

type failingSource struct{}

func (failingSource) ListCluster(context.Context, string) (*workv1alpha1.Work, error) {
	return nil, errors.New("failed to fetch the work branch: connection refused")
}

// The agent, not the syncer, measures its member and stamps that state and
// a heartbeat into every status it writes; the measurement gives up after
// --probe-timeout (it used to wait 10 s, whatever the flag).
func TestAgentStampsItsMeasurementWithinTheProbeTimeout(t *testing.T) {
	hung := make(chan struct{})
	member := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hung:
		}
	}))
	defer member.Close()
	defer close(hung)

	opts := DefaultOptions()
	opts.Cluster, opts.ProbeTimeout = "edge-1", 200*time.Millisecond
	status := workstest.NewStore()
	a := New(opts, failingSource{}, status, &rest.Config{Host: member.URL}, logr.Discard())
	start := time.Now()
	a.Once(context.Background())
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Once took %s with a member that does not answer, want about --probe-timeout (%s)", took, opts.ProbeTimeout)
	}
	if n := status.StatusWrites(); n != 1 {
		t.Fatalf("%d status writes, want 1", n)
	}
	st, err := status.GetStatus(context.Background(), opts.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if st.Heartbeat == nil || st.Cluster == nil {
		t.Fatalf("status without the agent's stamp: heartbeat %v, cluster %v", st.Heartbeat, st.Cluster)
	}
	ready := meta.FindStatusCondition(st.Cluster.Conditions, clusterv1alpha1.ConditionReady)
	if ready == nil || ready.Reason != workv1alpha1.ReasonClusterUnreachable {
		t.Errorf("cluster Ready = %+v, want %s", ready, workv1alpha1.ReasonClusterUnreachable)
	}
	if st.Message == "" {
		t.Error("the source error is not in the status")
	}
}

// Run refuses invalid options instead of panicking in its ticker.
func TestAgentRunRejectsInvalidOptions(t *testing.T) {
	opts := DefaultOptions()
	opts.Cluster, opts.Interval = "edge-1", 0
	a := New(opts, failingSource{}, workstest.NewStore(), &rest.Config{Host: "https://127.0.0.1:1"}, logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Run(ctx); err == nil || !strings.Contains(err.Error(), "--interval") {
		t.Errorf("Run = %v, want an error naming --interval", err)
	}
}

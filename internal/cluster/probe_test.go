package cluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestProbeRealMember probes a real member with a kwok node: Ready, the
// served APIs and the node's capacity, then an unreachable one.
func TestProbeRealMember(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1, Workloads: true})
	m := env.Members[0]
	dir := t.TempDir()
	kc, err := os.ReadFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "edge.kubeconfig"), kc, 0o600); err != nil {
		t.Fatal(err)
	}
	creds := &Credentials{KubeconfigDir: dir, QPS: 50, Burst: 100}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}
	cfg, err := creds.Config(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	st := Probe(context.Background(), cfg, time.Now())
	if len(st.Conditions) != 1 || st.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatalf("want Ready=True, got %+v", st.Conditions)
	}
	if !served(st, "apps/v1", "Deployment") || !served(st, "v1", "ConfigMap") {
		t.Errorf("apiEnablements miss apps/v1 Deployment or v1 ConfigMap: %d groupVersions", len(st.APIEnablements))
	}
	if st.NodeSummary == nil || st.NodeSummary.ReadyNum != 1 {
		t.Errorf("want one ready node, got %+v", st.NodeSummary)
	}
	pods := st.ResourceSummary.Allocatable["pods"]
	if pods.Value() != 110 {
		t.Errorf("allocatable pods = %s, want the kwok node's 110", pods.String())
	}

	if _, err := creds.Config(context.Background(), &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}); err == nil {
		t.Error("a cluster with neither kubeconfig nor secretRef must have no credentials")
	}
	if err := m.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	down := Probe(ctx, cfg, time.Now())
	if down.Conditions[0].Status != metav1.ConditionUnknown || down.Conditions[0].Reason != "ClusterUnreachable" {
		t.Errorf("a stopped apiserver must be Unknown/ClusterUnreachable, got %+v", down.Conditions)
	}
}

func served(st *clusterv1alpha1.ClusterStatus, gv, kind string) bool {
	for _, e := range st.APIEnablements {
		if e.GroupVersion != gv {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}

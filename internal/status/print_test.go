package status

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of the printers")

func TestWriteShowsClusterReadinessAndTaints(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := &Report{Revision: "abc1234567", Summary: "abc1234: 1/2 clusters applied and healthy, 1 not ready",
		Clusters: []ClusterRow{
			{Name: "member1", Mode: "Push", ClusterReady: "Unknown", Ready: "False", WantRevision: "abc1234567",
				Taints: []string{"cluster.karmada.io/unreachable:NoSchedule", "cluster.karmada.io/unreachable:NoExecute"}},
			{Name: "member2", Mode: "Push", ClusterReady: "True", Ready: "True", WantRevision: "abc1234567", AppliedRevision: "abc1234567"},
		}}
	var out bytes.Buffer
	writeText(&out, rep, now, false)
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 5 {
		t.Fatalf("output too short:\n%s", out.String())
	}
	for _, want := range []struct {
		line int
		head string // the first columns, as words
	}{
		{2, "CLUSTER MODE CLUSTER READY TAINTS READY"},
		{3, "member1 Push Unknown cluster.karmada.io/unreachable:NoSchedule,cluster.karmada.io/unreachable:NoExecute False"},
		{4, "member2 Push True - True"},
	} {
		head := strings.Fields(want.head)
		if got := strings.Fields(lines[want.line]); len(got) < len(head) || !slices.Equal(got[:len(head)], head) {
			t.Errorf("line %d = %q, want it to start with %q", want.line, lines[want.line], want.head)
		}
	}
}

// goldenReport is a report with one member of each kind: a push member
// not reachable, a pull agent that reports its cluster.
func goldenReport(now time.Time) *Report {
	heard := now.Add(-42 * time.Second)
	return &Report{Revision: "abc1234567", Summary: "abc1234: 1/2 clusters applied and healthy, 1 not ready",
		Clusters: []ClusterRow{
			{Name: "edge-1", Mode: "Pull", ClusterReady: "True", Ready: "True", WantRevision: "abc1234567", AppliedRevision: "abc1234567",
				Objects: 3, Healthy: 3, LastHeard: &heard, AgentVersion: "v0.2.0", KubernetesVersion: "v1.37.2", CPU: "8", Memory: "16Gi",
				Message: "applied and healthy"},
			{Name: "member1", Mode: "Push", ClusterReady: "Unknown", Ready: "False", WantRevision: "abc1234567", AppliedRevision: "0ld0000000",
				Objects: 3, LastHeard: &heard, Taints: []string{"cluster.karmada.io/unreachable:NoSchedule"},
				Message: "member not reachable: NoCredentials: cluster member1: no credentials: no member1.kubeconfig in --kubeconfig-dir and no spec.secretRef readable on a hub; applying waits"},
		},
		Templates: []TemplateRow{{Template: "Deployment.apps/demo/web", Clusters: []string{"edge-1", "member1"}, DesiredReplicas: 4, ReadyReplicas: 2, Workload: true}},
	}
}

// TestWriteGolden pins every format of a report (go test -update rewrites
// testdata/report.*).
func TestWriteGolden(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, format := range Formats {
		var out bytes.Buffer
		if err := Write(&out, goldenReport(now), format, now); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "report."+format)
		if *update {
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want, err := os.ReadFile(path); err != nil {
			t.Errorf("%v (go test -update writes it)", err)
		} else if diff := cmp.Diff(string(want), out.String()); diff != "" {
			t.Errorf("-o %s differs from %s (-want +got):\n%s", format, path, diff)
		}
	}
}

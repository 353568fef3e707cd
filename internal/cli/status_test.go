package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/status"
)

func TestPrintReportShowsClusterReadinessAndTaints(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := &status.Report{Revision: "abc1234567", Summary: "abc1234: 1/2 clusters applied and healthy, 1 not ready",
		Clusters: []status.ClusterRow{
			{Name: "member1", Mode: "Push", ClusterReady: "Unknown", Ready: "False", WantRevision: "abc1234567",
				Taints: []string{"cluster.karmada.io/unreachable:NoSchedule", "cluster.karmada.io/unreachable:NoExecute"}},
			{Name: "member2", Mode: "Push", ClusterReady: "True", Ready: "True", WantRevision: "abc1234567", AppliedRevision: "abc1234567"},
		}}
	var out bytes.Buffer
	printReport(&out, rep, now)
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

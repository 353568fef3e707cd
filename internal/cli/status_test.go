package cli

import (
	"bytes"
	"context"
	"io"
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

// goldenReport is a report with one member of each kind: a push member
// not reachable, a pull agent that reports its cluster.
func goldenReport(now time.Time) *status.Report {
	heard := now.Add(-42 * time.Second)
	return &status.Report{Revision: "abc1234567", Summary: "abc1234: 1/2 clusters applied and healthy, 1 not ready",
		Clusters: []status.ClusterRow{
			{Name: "edge-1", Mode: "Pull", ClusterReady: "True", Ready: "True", WantRevision: "abc1234567", AppliedRevision: "abc1234567",
				Objects: 3, Healthy: 3, LastHeard: &heard, AgentVersion: "v0.2.0", KubernetesVersion: "v1.37.2", CPU: "8", Memory: "16Gi",
				Message: "applied and healthy"},
			{Name: "member1", Mode: "Push", ClusterReady: "Unknown", Ready: "False", WantRevision: "abc1234567", AppliedRevision: "0ld0000000",
				Objects: 3, LastHeard: &heard, Taints: []string{"cluster.karmada.io/unreachable:NoSchedule"},
				Message: "member not reachable: NoCredentials: cluster member1: no credentials: no member1.kubeconfig in --kubeconfig-dir and no spec.secretRef readable on a hub; applying waits"},
		},
		Templates: []status.TemplateRow{{Template: "Deployment.apps/demo/web", Clusters: []string{"edge-1", "member1"}, DesiredReplicas: 4, ReadyReplicas: 2, Workload: true}},
	}
}

func TestStatusOutputGolden(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, format := range []string{"text", "wide", "json", "yaml", "name"} {
		var out bytes.Buffer
		if err := writeReport(&out, goldenReport(now), format, now); err != nil {
			t.Fatal(err)
		}
		golden(t, "status."+format, out.String())
	}
}

func TestHelpGolden(t *testing.T) {
	for _, name := range []string{"wait", "status"} {
		var out bytes.Buffer
		cmd := NewRootCommand(&out, &out)
		cmd.SetArgs([]string{name, "--help"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		golden(t, name+"-help.txt", out.String())
	}
}

func runStatus(ctx context.Context, out *syncBuffer, args ...string) error {
	cmd := NewRootCommand(out, io.Discard)
	cmd.SetArgs(append([]string{"status"}, args...))
	return cmd.ExecuteContext(ctx)
}

// TestStatusExitCodeAndClusterFilter: --exit-code fails while one member
// shown does not run the newest revision healthy, and passes once the
// members shown do; --cluster narrows the table and names unknown members.
func TestStatusExitCodeAndClusterFilter(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a"})
	f.put(waitRev2, map[string]string{"m1": "b", "m2": "b"})
	f.report("m1", true, "True", "ok")
	f.report("m2", false, "False", "member not reachable")
	ctx := context.Background()
	var out syncBuffer
	if err := runStatus(ctx, &out, "--repo", f.url); err != nil {
		t.Fatalf("status without --exit-code must exit 0 whatever the members do: %v", err)
	}
	out = syncBuffer{}
	if code := exitCode(runStatus(ctx, &out, "--repo", f.url, "--exit-code")); code != 1 {
		t.Errorf("--exit-code with m2 behind: exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "1/2 clusters applied and healthy") {
		t.Errorf("--exit-code must still print the report:\n%s", out.String())
	}
	out = syncBuffer{}
	if err := runStatus(ctx, &out, "--repo", f.url, "--exit-code", "--cluster", "m1", "-o", "name"); err != nil {
		t.Errorf("--exit-code --cluster m1: %v, want exit 0", err)
	}
	if out.String() != "cluster/m1\n" {
		t.Errorf("-o name --cluster m1 = %q, want cluster/m1 only", out.String())
	}
	if err := runStatus(ctx, &syncBuffer{}, "--repo", f.url, "--cluster", "m9"); exitCode(err) != 2 || !strings.Contains(err.Error(), "m9") {
		t.Errorf("--cluster m9: %v, want exit 2 naming m9", err)
	}
	f.report("m2", true, "True", "ok")
	if err := runStatus(ctx, &syncBuffer{}, "--repo", f.url, "--exit-code"); err != nil {
		t.Errorf("--exit-code with every member running %s: %v, want exit 0", waitRev2[:7], err)
	}
	for _, args := range [][]string{{"-o", "table"}, {"--interval", "0s"}, {"--watch", "--exit-code"}} {
		if err := runStatus(ctx, &syncBuffer{}, append([]string{"--repo", f.url}, args...)...); exitCode(err) != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
	}
}

// TestStatusWatchReprintsOnChange: --watch prints the report, prints it
// again when a member's status changes, and ends cleanly when interrupted.
func TestStatusWatchReprintsOnChange(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a"})
	f.report("m1", false, "False", "member not reachable")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- runStatus(ctx, &out, "--repo", f.url, "--watch", "--interval", "100ms", "-o", "name") }()
	until := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s; output:\n%s", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	until("no first report", func(s string) bool { return s == "cluster/m1\n" })
	f.report("m1", true, "True", "ok")
	until("no second report after m1 changed", func(s string) bool { return s == "cluster/m1\ncluster/m1\n" })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupted watch: %v, want a clean end", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not end when interrupted")
	}
	if got := strings.Count(out.String(), "cluster/m1"); got != 2 {
		t.Errorf("printed %d reports, want 2 (one per change):\n%s", got, out.String())
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

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

// TestStatusExitCodeWhenNothingOrNobodyRecords: --exit-code fails, and
// stderr says why, when the store holds no Work, and when the recording
// controller's heartbeat is older than --stale-after (or far in the
// future) though every member runs the newest revision; a recent
// heartbeat passes.
func TestStatusExitCodeWhenNothingOrNobodyRecords(t *testing.T) {
	ctx := context.Background()
	run := func(args ...string) (int, string) {
		t.Helper()
		var out syncBuffer
		var errOut bytes.Buffer
		cmd := NewRootCommand(&out, &errOut)
		cmd.SetArgs(append([]string{"status"}, args...))
		err := cmd.ExecuteContext(ctx)
		if err == nil {
			return 0, errOut.String()
		}
		if code := exitCode(err); code > 1 {
			t.Errorf("status %v: %v", args, err)
		}
		return exitCode(err), errOut.String()
	}
	empty := newWorkFleet(t)
	if code, stderr := run("--repo", empty.url, "--exit-code"); code != 1 || !strings.Contains(stderr, "nothing recorded") {
		t.Errorf("an empty store: exit %d, stderr %q; want 1 and \"nothing recorded\"", code, stderr)
	}

	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a"})
	f.report("m1", true, "True", "ok")
	if code, stderr := run("--repo", f.url, "--exit-code"); code != 0 || stderr != "" {
		t.Errorf("no heartbeat kept (an older controller): exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now().Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	code, stderr := run("--repo", f.url, "--exit-code")
	if code != 1 || !strings.Contains(stderr, "stopped or cannot read its source") {
		t.Errorf("a 10-minute-old heartbeat: exit %d, stderr %q; want 1 and why", code, stderr)
	}
	if code, _ := run("--repo", f.url, "--exit-code", "--stale-after", "15m"); code != 0 {
		t.Errorf("a 10-minute-old heartbeat with --stale-after 15m: exit %d, want 0", code)
	}
	// A heartbeat from the future (a forged one, or a clock far off) does
	// not pass for a live controller.
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now().Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run("--repo", f.url, "--exit-code"); code != 1 || !strings.Contains(stderr, "in the future") {
		t.Errorf("a heartbeat a day ahead: exit %d, stderr %q; want 1 and why", code, stderr)
	}
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run("--repo", f.url, "--exit-code"); code != 0 || stderr != "" {
		t.Errorf("a fresh heartbeat: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}

// TestStatusExitCodeMemberRepositories: with one works repository per
// member, --exit-code reads the recording controller's heartbeat there
// too: a stale one fails and says why, a fresh one passes.
func TestStatusExitCodeMemberRepositories(t *testing.T) {
	ctx := context.Background()
	f := newMemberWorkFleet(t, "m1", "m2")
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "b"})
	f.report("m1", true, "True", "ok")
	f.report("m2", true, "True", "ok")
	run := func() (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := NewRootCommand(&out, &errOut)
		cmd.SetArgs([]string{"status", "--repo", f.url, "--cluster", "m1,m2", "--exit-code"})
		err := cmd.ExecuteContext(ctx)
		if err == nil {
			return 0, errOut.String()
		}
		if code := exitCode(err); code > 1 {
			t.Fatalf("status: %v", err)
		}
		return exitCode(err), errOut.String()
	}
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now().Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(); code != 1 || !strings.Contains(stderr, "stopped or cannot read its source") {
		t.Errorf("a 10-minute-old heartbeat in the members' repositories: exit %d, stderr %q; want 1 and why", code, stderr)
	}
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(); code != 0 || stderr != "" {
		t.Errorf("a fresh heartbeat: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}

// TestStatusShowsARefusedSource: the recording controller keeps with its
// heartbeat the newest source revision it refused (--verify-commits).
// status prints which, why, since when and what members keep, in its text
// report and as sourceRefused in JSON; --exit-code exits 1 while it is
// refused though every member runs the newest recorded revision healthy,
// and 0 once the controller clears it. A refusal forged straight into the
// status repository, with terminal escapes and a reason far too long, is
// printed without the escapes and cut.
func TestStatusShowsARefusedSource(t *testing.T) {
	ctx := context.Background()
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a"})
	f.report("m1", true, "True", "ok")
	run := func(args ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := NewRootCommand(&out, &errOut)
		cmd.SetArgs(append([]string{"status", "--repo", f.url}, args...))
		err := cmd.ExecuteContext(ctx)
		if err == nil {
			return 0, out.String()
		}
		if code := exitCode(err); code != 1 {
			t.Fatalf("status %v: %v", args, err)
		}
		return 1, out.String()
	}
	refused := strings.Repeat("9a70926e", 5)
	since := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now(), RefusedRevision: refused,
		RefusedReason: "commit 9a70926: not signed", RefusedSince: since}); err != nil {
		t.Fatal(err)
	}
	want := "source: revision 9a70926 refused: commit 9a70926: not signed (since " + since.Format(time.RFC3339) + "); members keep " + waitRev1[:7]
	code, out := run("--exit-code")
	if code != 1 || !strings.Contains(out, "\n"+want+"\n") {
		t.Errorf("a refused source: exit %d, want 1 and the line %q in\n%s", code, want, out)
	}
	if code, out := run(); code != 0 || !strings.Contains(out, want) {
		t.Errorf("a refused source without --exit-code: exit %d, want 0 and the line in\n%s", code, out)
	}
	_, out = run("-o", "json")
	var rep struct {
		SourceRefused *struct {
			Revision, Reason string
			Since            time.Time
		} `json:"sourceRefused"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.SourceRefused; r == nil || r.Revision != refused || r.Reason != "commit 9a70926: not signed" || !r.Since.Equal(since) {
		t.Errorf("-o json: sourceRefused %+v, want %s, its reason and %v", r, refused, since)
	}
	_, out = run("-o", "yaml")
	if !strings.Contains(out, "sourceRefused:\n  reason: 'commit 9a70926: not signed'\n  revision: "+refused+"\n") {
		t.Errorf("-o yaml lacks sourceRefused:\n%s", out)
	}

	if err := f.store.PutRecorderHeartbeat(ctx, works.RecorderState{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, out := run("--exit-code"); code != 0 || strings.Contains(out, "refused") {
		t.Errorf("the refusal cleared: exit %d, want 0 and no refusal in\n%s", code, out)
	}
	_, out = run("-o", "json")
	if strings.Contains(out, "sourceRefused") {
		t.Errorf("the refusal cleared: -o json still has sourceRefused:\n%s", out)
	}

	// Anyone who can push to the status repository can write the heartbeat.
	repo, err := git.PlainOpen(strings.TrimPrefix(f.url, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := gitrepo.WriteTree(repo.Storer, nil)
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "x", Email: "x@example.com", When: time.Now()}
	c, err := gitrepo.WriteObject(repo.Storer, &object.Commit{Author: sig, Committer: sig, TreeHash: tree,
		Message: "propagit: recorder heartbeat\n\nRefused-Revision: " + refused + "\nRefused-Since: " + since.Format(time.RFC3339) +
			"\nRefused-Reason: \x1b]0;owned\a\x1b[2Jfine\u202e" + strings.Repeat("x", 10000) + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(gitstore.RecorderHeartbeatRef, c)); err != nil {
		t.Fatal(err)
	}
	code, out = run("--exit-code")
	line := ""
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "source: ") {
			line = l
		}
	}
	if code != 1 || strings.ContainsAny(out, "\x1b\a\u202e") || !strings.HasPrefix(line, "source: revision 9a70926 refused: ]0;owned[2Jfinexxx") ||
		!strings.Contains(line, "x… (since ") || len(line) > works.MaxRefusedReason+200 {
		t.Errorf("a forged refusal: exit %d, want 1 and a line without escapes, cut; got line %q", code, line)
	}
}

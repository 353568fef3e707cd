package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// sourceRepo is a fleet checkout with n commits, oldest first.
func sourceRepo(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for i := range n {
		writeFile(t, dir+"/fleet.yaml", strings.Repeat("x", i+1))
		if _, err := wt.Add("fleet.yaml"); err != nil {
			t.Fatal(err)
		}
		h, err := wt.Commit("commit", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h.String())
	}
	return dir, hashes
}

// TestWaitStopsAtOnceWhenSuperseded: m1's Work was changed by c2, a commit
// after c1, so m1 will never run c1: wait exits 3 at once naming m1, far
// inside its timeout. m2, unchanged by c2, is not named.
func TestWaitStopsAtOnceWhenSuperseded(t *testing.T) {
	dir, c := sourceRepo(t, 2)
	f := newWorkFleet(t)
	f.put(c[0], map[string]string{"m1": "a", "m2": "a"})
	f.put(c[1], map[string]string{"m1": "b", "m2": "a"})
	f.report("m1", true, "True", "ok")
	var out, errOut syncBuffer
	began := time.Now()
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", c[0], "--source", dir, "--timeout", "2m", "--interval", "100ms")
	if code := exitCode(err); code != exitSuperseded || time.Since(began) > 30*time.Second {
		t.Fatalf("exit %d after %s (%v), want %d at once", code, time.Since(began), err, exitSuperseded)
	}
	if msg := err.Error(); !strings.Contains(msg, "superseded") || !strings.HasSuffix(msg, ": m1") {
		t.Errorf("error %q: want superseded, naming m1 only", msg)
	}
	// The same, with the ref the pipeline has: HEAD~1 in the checkout.
	err = runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", "HEAD~1", "--source", dir, "--timeout", "2m", "--interval", "100ms")
	if code := exitCode(err); code != exitSuperseded {
		t.Errorf("--revision HEAD~1: exit %d (%v), want %d", code, err, exitSuperseded)
	}
}

// TestWaitKeepsWaitingForARevisionNotRecordedYet: the store's newest
// revision is older than REV, which the controller has yet to render:
// wait waits (exit 1 at its timeout), it does not call REV superseded.
func TestWaitKeepsWaitingForARevisionNotRecordedYet(t *testing.T) {
	dir, c := sourceRepo(t, 2)
	f := newWorkFleet(t)
	f.put(c[0], map[string]string{"m1": "a"})
	f.report("m1", true, "True", "ok")
	var out, errOut syncBuffer
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", c[1], "--source", dir, "--timeout", "1s", "--interval", "100ms")
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1 (timed out)", code, err)
	}
}

// TestWaitRefusesAHashTheSourceDoesNotHold: with --source named, a hash
// that is no commit of it is refused at once (exit 2).
func TestWaitRefusesAHashTheSourceDoesNotHold(t *testing.T) {
	dir, _ := sourceRepo(t, 1)
	f := newWorkFleet(t)
	var out, errOut syncBuffer
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", "deadbeefdeadbeef", "--source", dir, "--timeout", "2m")
	if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), "not a commit of SOURCE "+dir) {
		t.Fatalf("exit %d (%v), want 2 naming SOURCE", code, err)
	}
}

// TestWaitStopsWhenNothingIsRecorded: a store no controller ever wrote to
// ends the wait after the grace period with exit 4, not at --timeout.
func TestWaitStopsWhenNothingIsRecorded(t *testing.T) {
	defer func(g time.Duration) { nothingGrace = g }(nothingGrace)
	nothingGrace = 300 * time.Millisecond
	f := newWorkFleet(t)
	var out, errOut syncBuffer
	began := time.Now()
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev1, "--timeout", "2m", "--interval", "100ms")
	if code := exitCode(err); code != exitNothingRecorded || time.Since(began) > 30*time.Second {
		t.Fatalf("exit %d after %s (%v), want %d after the grace", code, time.Since(began), err, exitNothingRecorded)
	}
}

// TestWaitStopsOnAMemberWithoutCredentials: a targeted member whose Ready
// reason says the hub holds no usable credential for it ends the wait
// after the grace period with exit 5, naming it; a member that is only
// unreachable is waited for until --timeout.
func TestWaitStopsOnAMemberWithoutCredentials(t *testing.T) {
	defer func(g time.Duration) { nothingGrace = g }(nothingGrace)
	nothingGrace = 300 * time.Millisecond
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a"})
	f.report("m1", true, "True", "ok")
	setReason := func(reason string) {
		t.Helper()
		ctx := context.Background()
		st, err := f.store.GetStatus(ctx, "m2")
		if err != nil {
			t.Fatal(err)
		}
		st.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason,
			Message: "member not reachable: " + reason + ": ...; applying waits", LastTransitionTime: metav1.Now()}}
		if err := f.store.PutStatus(ctx, "m2", st); err != nil {
			t.Fatal(err)
		}
	}
	setReason(workv1alpha1.ReasonMemberNotReady)
	var out, errOut syncBuffer
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev1, "--timeout", "1s", "--interval", "100ms")
	if code := exitCode(err); code != 1 {
		t.Fatalf("an unreachable member: exit %d (%v), want 1 at --timeout", code, err)
	}
	setReason(workv1alpha1.ReasonNoCredentials)
	began := time.Now()
	err = runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev1, "--timeout", "2m", "--interval", "100ms")
	if code := exitCode(err); code != exitNoCredentials || time.Since(began) > 30*time.Second || !strings.Contains(err.Error(), "m2") || strings.Contains(err.Error(), "m1") {
		t.Fatalf("exit %d after %s (%v), want %d after the grace, naming m2 only", code, time.Since(began), err, exitNoCredentials)
	}
}

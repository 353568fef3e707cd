package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/memberstore"
)

const (
	waitRev1 = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	waitRev2 = "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// workFleet is a git works store on a file:// remote holding the Works a
// controller would record, and writes status as members would.
type workFleet struct {
	t     *testing.T
	url   string
	store fleetStore
}

// fleetStore is what a recording controller and its members write.
type fleetStore interface {
	works.Store
	works.StatusStore
	works.RecorderHeartbeats
}

// newMemberWorkFleet is a workFleet of one works repository per member of
// clusters (memberstore), reached by the store template url.
func newMemberWorkFleet(t *testing.T, clusters ...string) *workFleet {
	t.Helper()
	root := t.TempDir()
	for _, c := range clusters {
		if _, err := git.PlainInit(filepath.Join(root, "works-"+c+".git"), true); err != nil {
			t.Fatal(err)
		}
	}
	url := "file://" + root + "/works-{cluster}.git"
	store, err := memberstore.New(url, gitstore.Options{Branch: "propagit/works", CacheDir: t.TempDir()}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	store.Track(clusters)
	return &workFleet{t: t, url: url, store: store}
}

func newWorkFleet(t *testing.T) *workFleet {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fleet.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	url := "file://" + dir
	store, err := gitstore.New(gitstore.Options{URL: url, Branch: "propagit/works", CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &workFleet{t: t, url: url, store: store}
}

// put records, for rev, a Work per cluster holding one ConfigMap whose
// value is value[cluster].
func (f *workFleet) put(rev string, value map[string]string) {
	f.t.Helper()
	var ws []*workv1alpha1.Work
	for cluster, v := range value {
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"demo"},"data":{"v":%q}}`, v)
		ws = append(ws, &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: cluster,
			Manifests: []runtime.RawExtension{{Raw: []byte(raw)}}}})
	}
	if _, err := f.store.Put(context.Background(), rev, ws); err != nil {
		f.t.Fatal(err)
	}
}

// report writes the status a member that applied its current Work writes
// (applied false: it still runs an earlier content).
func (f *workFleet) report(cluster string, applied bool, ready metav1.ConditionStatus, msg string) {
	f.t.Helper()
	ctx := context.Background()
	ws, err := f.store.List(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, w := range ws {
		if w.Spec.Cluster != cluster {
			continue
		}
		st := &workv1alpha1.WorkStatus{AppliedRevision: waitRev1, AppliedDigest: "0000000000000000",
			Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionReady, Status: ready, Reason: "Test", Message: msg,
				LastTransitionTime: metav1.Now()}}}
		if applied {
			st.AppliedRevision, st.AppliedDigest = w.Spec.SourceRevision, workv1alpha1.Digest(w)
		}
		if err := f.store.PutStatus(ctx, cluster, st); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	f.t.Fatalf("no Work for %s", cluster)
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runWait(ctx context.Context, stdout, stderr *syncBuffer, args ...string) error {
	cmd := NewRootCommand(stdout, stderr)
	cmd.SetArgs(append([]string{"wait"}, args...))
	return cmd.ExecuteContext(ctx)
}

// TestWaitExitsZeroWhenEveryMemberRunsTheRevision: m1's Work changed at
// rev2, m2's did not (it keeps rev1) and both applied their content: both
// run rev2, named by a short prefix.
func TestWaitExitsZeroWhenEveryMemberRunsTheRevision(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a"})
	f.put(waitRev2, map[string]string{"m1": "b", "m2": "a"})
	f.report("m1", true, "True", "ok")
	f.report("m2", true, "True", "ok")
	var out, errOut syncBuffer
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev2[:7], "--timeout", "30s", "--interval", "100ms")
	if err != nil {
		t.Fatalf("wait: %v (exit %d)\nstderr:\n%s", err, exitCode(err), errOut.String())
	}
	if want := "2222222 healthy on 2/2 clusters\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
}

// TestWaitTimesOutWithAReasonPerMember: m2 has not applied rev2 and m1's
// objects are not healthy; wait --for healthy exits 1 with a table naming
// why, while --for applied is satisfied by m1 alone.
func TestWaitTimesOutWithAReasonPerMember(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a", "m3": "a"})
	f.put(waitRev2, map[string]string{"m1": "b", "m2": "b", "m3": "b"})
	f.report("m1", true, "False", "ConfigMap/demo/cfg: InProgress")
	f.report("m2", false, "False", "member not reachable: NoCredentials: no credentials for m2")
	f.report("m3", true, "True", "ok")
	var out, errOut syncBuffer
	err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev2, "--timeout", "500ms", "--interval", "100ms")
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1", code, err)
	}
	if want := "timed out after 500ms: 1/3 clusters reached " + waitRev2[:7] + " (healthy)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	golden(t, "wait-timeout.txt", out.String())
	for _, line := range []string{"m1: waiting: applied, not healthy", "m2: waiting: not applied yet", "m3: reached"} {
		if !strings.Contains(errOut.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, errOut.String())
		}
	}

	out, errOut = syncBuffer{}, syncBuffer{}
	err = runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev2, "--for", "applied",
		"--cluster", "m1", "--cluster", "m3", "--timeout", "30s", "--interval", "100ms")
	if err != nil {
		t.Fatalf("--for applied on m1 and m3: %v\nstderr:\n%s", err, errOut.String())
	}
}

// TestWaitReturnsOnceTheLastMemberArrives: wait is already polling when m2
// applies; it must notice and exit 0, well before its timeout.
func TestWaitReturnsOnceTheLastMemberArrives(t *testing.T) {
	f := newWorkFleet(t)
	f.put(waitRev1, map[string]string{"m1": "a", "m2": "a"})
	f.put(waitRev2, map[string]string{"m1": "b", "m2": "b"})
	f.report("m1", true, "True", "ok")
	f.report("m2", false, "Unknown", "")
	var out, errOut syncBuffer
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- runWait(context.Background(), &out, &errOut, "--repo", f.url, "--revision", waitRev2, "--timeout", "1m", "--interval", "100ms")
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "m2: waiting: not applied yet") {
		if time.Now().After(deadline) {
			t.Fatalf("wait never reported m2 waiting; stderr:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.report("m2", true, "True", "ok")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait: %v\nstderr:\n%s", err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("wait did not return after m2 arrived; stderr:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "m2: reached") {
		t.Errorf("stderr lacks m2's arrival:\n%s", errOut.String())
	}
	t.Logf("wait returned %s after it started", time.Since(start).Round(time.Millisecond))
}

// TestWaitInvalidFlagsExitTwo: every bad flag is refused before anything
// is read, naming the flag.
func TestWaitInvalidFlagsExitTwo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "--revision is required"},
		{[]string{"--revision", "abc12"}, "--revision"},
		{[]string{"--revision", "not-a-hash"}, "--revision"},
		{[]string{"--revision", waitRev1, "--for", "ready"}, "--for"},
		{[]string{"--revision", waitRev1, "--timeout", "0s"}, "--timeout"},
		{[]string{"--revision", waitRev1, "--timeout", "48h"}, "--timeout"},
		{[]string{"--revision", waitRev1, "--interval", "1ms"}, "--interval"},
		{[]string{"--revision", waitRev1, "--cluster", ""}, "--cluster"},
	} {
		var out, errOut syncBuffer
		// --source is no repository: a name cannot resolve there.
		err := runWait(context.Background(), &out, &errOut, append([]string{"--repo", "file:///nonexistent.git", "--source", t.TempDir()}, tt.args...)...)
		if code := exitCode(err); code != 2 || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("%v: exit %d, error %v; want exit 2 naming %s", tt.args, code, err, tt.want)
		}
	}
}

// TestWaitResolvesBranchesAndTags: --revision main, HEAD or a tag is the
// commit the checkout names, as git rev-parse would give it; a name the
// checkout does not have is refused before anything is read.
func TestWaitResolvesBranchesAndTags(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}
	first, err := wt.Commit("first", &git.CommitOptions{AllowEmptyCommits: true, Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1", first, nil); err != nil {
		t.Fatal(err)
	}
	second, err := wt.Commit("second", &git.CommitOptions{AllowEmptyCommits: true, Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	f := newWorkFleet(t)
	f.put(first.String(), map[string]string{"m1": "a"})
	f.report("m1", true, "True", "ok")
	run := func(rev string) (string, error) {
		var out, errOut syncBuffer
		err := runWait(context.Background(), &out, &errOut, "--repo", f.url, "--source", dir, "--revision", rev, "--timeout", "30s", "--interval", "100ms")
		return out.String(), err
	}
	if out, err := run("v1"); err != nil || !strings.HasPrefix(out, first.String()[:7]+" healthy on 1/1") {
		t.Errorf("wait --revision v1: %q, %v; want %s reached", out, err, first)
	}
	// HEAD is the second commit, which no Work records yet.
	f.put(second.String(), map[string]string{"m1": "b"})
	f.report("m1", true, "True", "ok")
	for _, rev := range []string{"HEAD", "master", "HEAD~0"} {
		if out, err := run(rev); err != nil || !strings.HasPrefix(out, second.String()[:7]+" healthy") {
			t.Errorf("wait --revision %s: %q, %v; want %s reached", rev, out, err, second)
		}
	}
	if _, err := run("no-such-branch"); exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), `cannot resolve "no-such-branch"`) {
		t.Errorf("wait --revision no-such-branch: %v (exit %d), want exit 2 naming it", err, exitCode(err))
	}
}

package gitstore

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/workstest"
)

func TestStatusWrittenOnlyOnTransitions(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		g := r.store(t)
		ref := StatusRef("member1")
		steps := []struct {
			name        string
			status      *workv1alpha1.WorkStatus
			wantCommits int
		}{
			{"first status", testStatus("rev1", metav1.ConditionTrue, t0), 1},
			{"same status", testStatus("rev1", metav1.ConditionTrue, t0), 1},
			{"heartbeat and transition time only", testStatus("rev1", metav1.ConditionTrue, t0.Add(time.Hour)), 1},
			{"list order only", reversed(testStatus("rev1", metav1.ConditionTrue, t0)), 1},
			{"ready flips", testStatus("rev1", metav1.ConditionFalse, t0.Add(2*time.Hour)), 2},
			{"new revision", testStatus("rev2", metav1.ConditionFalse, t0.Add(3*time.Hour)), 3},
		}
		for _, s := range steps {
			if err := g.PutStatus(ctx, "member1", s.status); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if n := len(r.History(t, ref)); n != s.wantCommits {
				t.Errorf("%s: commits = %d, want %d", s.name, n, s.wantCommits)
			}
		}
		hist := r.History(t, ref)
		if len(hist) != 3 || len(hist[2].ParentHashes) != 0 || hist[0].ParentHashes[0] != hist[1].Hash {
			t.Fatalf("status history is not a chain ending in a root commit")
		}
		if msg := hist[0].Message; !strings.Contains(msg, "Applied-Revision: rev2\nReady: False (Applied)\n") {
			t.Errorf("status commit message = %q", msg)
		}
		got, err := r.store(t).GetStatus(ctx, "member1") // a reader elsewhere
		if err != nil {
			t.Fatal(err)
		}
		// Transition times are those of the real transitions: Applied never
		// changed, Ready last changed at step 4.
		want := works.Normalize(steps[5].status)
		want.Conditions[0].LastTransitionTime = metav1.Time{Time: t0}
		want.Conditions[1].LastTransitionTime = metav1.Time{Time: t0.Add(2 * time.Hour)}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("GetStatus (-want +got):\n%s", d)
		}
		if branch := r.History(t, worksBranch); branch != nil {
			t.Errorf("status writes touched the work branch")
		}
	})
}

// TestStatusHeartbeatRefresh: a status that changes nothing but its
// heartbeat makes no status commit; once per HeartbeatInterval it moves the
// heartbeat ref, which keeps no history, and readers see the newest
// heartbeat.
func TestStatusHeartbeatRefresh(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	g := r.store(t, func(o *Options) { o.HeartbeatInterval = time.Minute })
	for i, step := range []struct{ at, seen time.Duration }{
		{0, 0}, {30 * time.Second, 0}, {59 * time.Second, 0}, {61 * time.Second, 61 * time.Second},
		{90 * time.Second, 61 * time.Second}, {125 * time.Second, 125 * time.Second},
	} {
		st := testStatus("rev1", metav1.ConditionTrue, t0.Add(step.at))
		st.Cluster = &clusterv1alpha1.ClusterStatus{} // written by a pull agent, as heartbeats are
		if err := g.PutStatus(ctx, "m", st); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		st, err := r.store(t).GetStatus(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		if st.Heartbeat == nil || !st.Heartbeat.Equal(&metav1.Time{Time: t0.Add(step.seen)}) {
			t.Errorf("after the write at %s: heartbeat %v, want %s", step.at, st.Heartbeat, t0.Add(step.seen))
		}
	}
	if n := len(r.History(t, StatusRef("m"))); n != 1 {
		t.Errorf("status commits = %d, want 1: heartbeats are not status transitions", n)
	}
	if n := len(r.History(t, HeartbeatRef("m"))); n != 1 {
		t.Errorf("heartbeat ref history = %d commits, want 1 (force-pushed, no parents)", n)
	}
}

func TestGetStatusOfUnknownClusterIsZero(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		got, err := r.store(t).GetStatus(ctxT(t), "nobody")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(&workv1alpha1.WorkStatus{}, got); d != "" {
			t.Errorf("status (-want +got):\n%s", d)
		}
	})
}

func TestStatusWritersOfTwoClustersConcurrently(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		shared := r.store(t)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, cluster := range []string{"east", "west"} {
			wg.Go(func() { errs[i] = shared.PutStatus(ctx, cluster, testStatus("rev-"+cluster, metav1.ConditionTrue, t0)) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}
		for _, cluster := range []string{"east", "west"} {
			st, err := r.store(t).GetStatus(ctx, cluster)
			if err != nil || st.AppliedRevision != "rev-"+cluster {
				t.Errorf("status of %s = %+v, %v", cluster, st, err)
			}
		}
	})
}

// TestManyStatusWritersLoseNothing: 20 agents, each with its own store,
// write 5 distinct statuses each at the same time; every ref ends at its
// last status with its 5 commits.
func TestManyStatusWritersLoseNothing(t *testing.T) {
	const clusters, writes = 20, 5
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		began := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, clusters*writes)
		for c := range clusters {
			g := r.store(t)
			cluster := fmt.Sprintf("member%02d", c)
			wg.Go(func() {
				for i := range writes {
					if err := g.PutStatus(ctx, cluster, testStatus(fmt.Sprintf("rev%d", i), metav1.ConditionTrue, t0)); err != nil {
						errs <- fmt.Errorf("%s write %d: %w", cluster, i, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		elapsed := time.Since(began)
		t.Logf("%s: %d status commits by %d concurrent writers in %s: %.0f writes/s",
			r.Name, clusters*writes, clusters, elapsed.Round(time.Millisecond), float64(clusters*writes)/elapsed.Seconds())
		reader := r.store(t)
		for c := range clusters {
			cluster := fmt.Sprintf("member%02d", c)
			st, err := reader.GetStatus(ctx, cluster)
			if err != nil {
				t.Fatal(err)
			}
			if st.AppliedRevision != fmt.Sprintf("rev%d", writes-1) {
				t.Errorf("%s ends at %s; want rev%d", cluster, st.AppliedRevision, writes-1)
			}
			if n := len(r.History(t, StatusRef(cluster))); n != writes {
				t.Errorf("%s: %d commits, want %d", cluster, n, writes)
			}
		}
	})
}

// TestStatusRetriesWhenRefMoved: another writer moved the ref after this
// store read it; the push is rejected, the store refetches and writes on
// top.
func TestStatusRetriesWhenRefMoved(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		a, b := r.store(t), r.store(t)
		if err := a.PutStatus(ctx, "m", testStatus("rev1", metav1.ConditionTrue, t0)); err != nil {
			t.Fatal(err)
		}
		if err := b.PutStatus(ctx, "m", testStatus("rev2", metav1.ConditionTrue, t0)); err != nil {
			t.Fatal(err)
		}
		if err := a.PutStatus(ctx, "m", testStatus("rev3", metav1.ConditionTrue, t0)); err != nil {
			t.Fatal(err)
		}
		if n := len(r.History(t, StatusRef("m"))); n != 3 {
			t.Errorf("commits = %d, want 3", n)
		}
		if st, _ := b.GetStatus(ctx, "m"); st.AppliedRevision != "rev3" {
			t.Errorf("status = %s, want rev3", st.AppliedRevision)
		}
	})
}

func TestStatusURLKeepsStatusRefsApart(t *testing.T) {
	ctx := ctxT(t)
	works, statuses := fileRemote(t), fileRemote(t)
	g := works.store(t, func(o *Options) { o.StatusURL = statuses.URL })
	if _, err := g.Put(ctx, "rev1", fleet(1, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	if err := g.PutStatus(ctx, "c0", testStatus("rev1", metav1.ConditionTrue, t0)); err != nil {
		t.Fatal(err)
	}
	if works.History(t, StatusRef("c0")) != nil || len(statuses.History(t, StatusRef("c0"))) != 1 {
		t.Errorf("the status ref is not (only) in the status repository")
	}
	if statuses.History(t, worksBranch) != nil {
		t.Errorf("the work branch is in the status repository")
	}
}

// TestHeartbeatReadWhileItMoves: over smart HTTP a fetch is two requests,
// the ref advertisement and the pack request. An agent force-pushing its
// heartbeat between the two leaves the advertised commit unreachable, and
// git upload-pack refuses it ("not our ref"). The reader asks again and
// gets the newer heartbeat instead of failing.
func TestHeartbeatReadWhileItMoves(t *testing.T) {
	r := httpRemote(t)
	ctx := ctxT(t)
	agent := r.store(t, func(o *Options) { o.HeartbeatInterval = time.Second })
	first := testStatus("rev1", metav1.ConditionTrue, t0)
	first.Cluster = &clusterv1alpha1.ClusterStatus{}
	if err := agent.PutStatus(ctx, "m", first); err != nil {
		t.Fatal(err)
	}
	if err := agent.putHeartbeat(ctx, "m", t0); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(r.Srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The first pack request reads the status ref; the next two, the
	// heartbeat's, each meet a move (twice, so that one retry is not
	// enough).
	var packRequests atomic.Int32
	backend := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/git-upload-pack") {
			if n := packRequests.Add(1); n == 2 || n == 3 {
				if err := agent.putHeartbeat(req.Context(), "m", t0.Add(time.Duration(n-1)*time.Minute)); err != nil {
					t.Errorf("moving the heartbeat: %v", err)
				}
			}
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(proxy.Close)

	reader := (&remote{&workstest.Remote{URL: proxy.URL + "/works.git", Auth: r.Auth}}).store(t)
	st, err := reader.GetStatus(ctx, "m")
	if err != nil {
		t.Fatalf("GetStatus while the heartbeat moves: %v", err)
	}
	if want := t0.Add(2 * time.Minute); st.Heartbeat == nil || !st.Heartbeat.Time.Equal(want) {
		t.Errorf("heartbeat = %v, want the newest, %s", st.Heartbeat, want)
	}
	if n := packRequests.Load(); n != 4 {
		t.Errorf("pack requests = %d, want 4: the status, then the heartbeat three times", n)
	}
}

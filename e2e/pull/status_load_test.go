package pull

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// statusHistory returns the Applied-Revision of every commit on cluster's
// status ref, newest first, read from the bare repository on disk.
func statusHistory(dir, cluster string) ([]string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	ref, err := repo.Reference(gitstore.StatusRef(cluster), true)
	if err != nil {
		return nil, err
	}
	iter, err := repo.Log(&git.LogOptions{From: ref.Hash()})
	if err != nil {
		return nil, err
	}
	var revs []string
	err = iter.ForEach(func(c *object.Commit) error {
		for _, line := range strings.Split(c.Message, "\n") {
			if rev, ok := strings.CutPrefix(line, "Applied-Revision: "); ok {
				revs = append(revs, rev)
			}
		}
		return nil
	})
	return revs, err
}

// TestPullManyAgentsStatus: 20 agents (simulated: no members, each its own
// GitStore as its own process would have) write a changed status about
// every second for five rounds into one repository over smart HTTP, all at
// once. Two of them overlap with a second copy writing the same statuses
// to the same ref, as during a rolling update of the agent, so pushes are
// rejected and retried. Every status ref ends at its last status, the
// single-writer refs with every round in their history — no lost update —
// and no write fails.
func TestPullManyAgentsStatus(t *testing.T) {
	const (
		agents   = 20
		overlaps = 2 // agents 0 and 1 have a second writer
		rounds   = 5
		every    = time.Second
	)
	r := e2etest.HTTPRemote(t)
	prefix := randomName("edge")
	cluster := func(i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }
	revision := func(round int) string { return fmt.Sprintf("rev-%d", round) }

	writers := agents + overlaps
	start := time.Now()
	errs := make([][]error, writers)
	slowest := make([]time.Duration, writers)
	var wg sync.WaitGroup
	for w := range writers {
		name := cluster(w % agents)
		wg.Go(func() {
			store, err := gitstore.New(gitstore.Options{URL: r.URL})
			if err != nil {
				errs[w] = append(errs[w], err)
				return
			}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for round := 1; round <= rounds; round++ {
				st := &workv1alpha1.WorkStatus{
					AppliedRevision: revision(round),
					AgentVersion:    agentVersion,
					Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
						Reason: "Ready", Message: fmt.Sprintf("revision %s applied", revision(round))}},
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				began := time.Now()
				if err := store.PutStatus(ctx, name, st); err != nil {
					errs[w] = append(errs[w], fmt.Errorf("%s round %d: %w", name, round, err))
				}
				slowest[w] = max(slowest[w], time.Since(began))
				cancel()
				if round < rounds {
					<-tick.C // pace the rounds like an agent's transitions
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for w, es := range errs {
		for _, err := range es {
			t.Errorf("writer %d: status write failed: %v", w, err)
		}
	}

	// Every ref ends at the last round, as any reader sees it; a ref with
	// one writer holds every round, newest first.
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
	var wantHistory []string
	for round := rounds; round >= 1; round-- {
		wantHistory = append(wantHistory, revision(round))
	}
	landed := 0
	for i := range agents {
		history, err := statusHistory(r.Dir, cluster(i))
		if err != nil {
			t.Errorf("status ref of %s: %v", cluster(i), err)
			continue
		}
		landed += len(history)
		if i >= overlaps && strings.Join(history, ",") != strings.Join(wantHistory, ",") {
			t.Errorf("status history of %s: %v, want %v", cluster(i), history, wantHistory)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		st, err := reader.GetStatus(ctx, cluster(i))
		cancel()
		if err != nil {
			t.Errorf("status of %s: %v", cluster(i), err)
			continue
		}
		if st.AppliedRevision != revision(rounds) || !e2etest.IsReady(st) {
			t.Errorf("status of %s: %s, want the last round's", cluster(i), e2etest.DescribeStatus(st))
		}
	}
	pushes := r.Server.Pushes()
	t.Logf("%d writers on %d status refs × %d rounds in %s: %d pushes served, %d commits landed, %d pushes rejected and retried; %.0f pushes/min; %d ref listings, %d fetches; slowest write %s",
		writers, agents, rounds, elapsed.Round(time.Millisecond), pushes, landed, pushes-int64(landed),
		perMinute(pushes, elapsed), r.Server.RefAdvertisements(), r.Server.Fetches(), maxDuration(slowest).Round(time.Millisecond))
}

func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/testenv"
)

const ns = "propagit-system"

// replica is one Sharder with a record of what its user did.
type replica struct {
	s      *shard.Sharder
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	released []string
}

func (r *replica) releasedKeys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.released...)
}

func startReplica(t *testing.T, m *testenv.Member, id string, keys []string) *replica {
	t.Helper()
	r := &replica{done: make(chan struct{})}
	r.s = shard.New(m.Client(), shard.Options{Namespace: ns, Identity: id, LeaseDuration: 3 * time.Second,
		RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond},
		func(key string) { r.mu.Lock(); r.released = append(r.released, key); r.mu.Unlock() }, logr.Discard())
	r.s.Want(keys)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { defer close(r.done); _ = r.s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// holders maps each key to the replicas that say they hold it.
func holders(keys []string, rs map[string]*replica) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		for id, r := range rs {
			if r.s.Holds(k) {
				out[k] = append(out[k], id)
			}
		}
	}
	return out
}

// TestShardersSplitKeysAndTakeOver runs three Sharders against a real
// apiserver: every key is held by exactly one of them; one stops (its keys
// released first) and the other two hold everything; a fourth joins and
// takes keys only from the others' share.
func TestShardersSplitKeysAndTakeOver(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	ctx := context.Background()
	if _, err := m.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keys := []string{shard.RecorderKey}
	for i := range 6 {
		keys = append(keys, shard.MemberKey(fmt.Sprintf("member%d", i+1)))
	}
	rs := map[string]*replica{}
	for _, id := range []string{"r1", "r2", "r3"} {
		rs[id] = startReplica(t, m, id, keys)
	}
	each := func(want func(k string, hs []string) (bool, string)) {
		t.Helper()
		e2etest.Eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
			h := holders(keys, rs)
			for _, k := range keys {
				if ok, msg := want(k, h[k]); !ok {
					return false, fmt.Sprintf("%s: %s (holders %v)", k, msg, h)
				}
			}
			return true, ""
		})
	}
	live := []string{"r1", "r2", "r3"}
	each(func(k string, hs []string) (bool, string) {
		return len(hs) == 1 && hs[0] == shard.Owner(k, live), fmt.Sprintf("want held by %s alone", shard.Owner(k, live))
	})

	// r3 stops: it lets go of each key it held before the Lease goes.
	var had []string
	for _, k := range keys {
		if rs["r3"].s.Holds(k) {
			had = append(had, k)
		}
	}
	// Keys r3 took and gave back while the replicas were starting do not
	// count: only what it lets go of once stopped.
	earlier := len(rs["r3"].releasedKeys())
	stopped := time.Now()
	rs["r3"].cancel()
	<-rs["r3"].done
	got := rs["r3"].releasedKeys()[earlier:]
	slices.Sort(got)
	slices.Sort(had)
	if !slices.Equal(got, had) {
		t.Errorf("r3 released %v, held %v", got, had)
	}
	delete(rs, "r3")
	live = []string{"r1", "r2"}
	each(func(k string, hs []string) (bool, string) {
		return len(hs) == 1 && hs[0] == shard.Owner(k, live), fmt.Sprintf("want held by %s alone", shard.Owner(k, live))
	})
	t.Logf("a replica stopped → its %d keys held by the others in %s", len(had), time.Since(stopped).Round(10*time.Millisecond))

	// r4 joins: keys move to it only.
	before := holders(keys, rs)
	rs["r4"] = startReplica(t, m, "r4", keys)
	live = []string{"r1", "r2", "r4"}
	each(func(k string, hs []string) (bool, string) {
		return len(hs) == 1 && hs[0] == shard.Owner(k, live), fmt.Sprintf("want held by %s alone", shard.Owner(k, live))
	})
	for _, k := range keys {
		if after := holders([]string{k}, rs)[k][0]; after != before[k][0] && after != "r4" {
			t.Errorf("%s moved from %s to %s when r4 joined", k, before[k][0], after)
		}
	}
}

package dashboard

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/rollout"
)

// rolloutStore is a works store that keeps the rollouts' record too.
type rolloutStore struct {
	*memStore
	data []byte
}

func (r *rolloutStore) PutRollouts(_ context.Context, data []byte) error { r.data = data; return nil }
func (r *rolloutStore) Rollouts(context.Context) ([]byte, error)         { return r.data, nil }

// The revisions page shows where each RolloutPolicy's rollout stands: its
// revision, phase, open wave, clusters and soak left, and why it stopped.
func TestRolloutDashboardShowsWaves(t *testing.T) {
	store := newMemStore()
	now := time.Now()
	d := deployment("demo", "nginx", 2)
	store.put(t, "member1", rev2, readyStatus(rev2, now, d), d)
	rs := &rolloutStore{memStore: store}
	soak := now.Add(4 * time.Minute)
	doc := rollout.Document{Rollouts: []*rollout.State{{Policy: "RolloutPolicy.propagit.io/demo/nginx", Revision: rev2, Stable: rev1,
		Phase: rollout.Progressing, WaveName: "eu", SoakEnds: soak,
		Given: map[string]*rollout.Given{"member1": {Wave: "canary", At: now, HealthySince: now}}}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	rs.data = data
	s, ts := newTestServer(t, store, func(o *Options) { o.Works = rs; o.Now = func() time.Time { return now } })
	_, body := get(t, ts, "/revisions")
	row := between(body, `data-policy="RolloutPolicy.propagit.io/demo/nginx"`, "</tr>")
	mustContain(t, row, `data-col="phase" class="">Progressing<`, `data-col="wave">eu<`, "<td>1</td><td>1</td>", "4m")

	doc.Rollouts[0].Phase, doc.Rollouts[0].Reason, doc.Rollouts[0].SoakEnds = rollout.RolledBack, "wave canary: 1 of 1 clusters failed", time.Time{}
	if rs.data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, ts, "/revisions")
	mustContain(t, between(body, `data-policy="RolloutPolicy.propagit.io/demo/nginx"`, "</tr>"), `class="bad">RolledBack`, "wave canary: 1 of 1 clusters failed")
}

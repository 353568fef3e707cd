package works_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-logr/logr"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/works/crstore"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/memberstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

// simConfig is the load of BenchmarkGitStoreAgents: how many pull agents,
// for how long, at which intervals. The defaults are a short run for
// `make bench`; PROPAGIT_SIM_AGENTS and PROPAGIT_SIM_DURATION (Go
// durations) scale it up (the run: 1000 agents, 10m).
type simConfig struct {
	agents    int
	duration  time.Duration
	heartbeat time.Duration // the agent's --heartbeat-interval default
	poll      time.Duration // the agent's --interval default: a Work fetch
	change    time.Duration // a status transition (a new revision applied)
}

func simFromEnv(b *testing.B) simConfig {
	c := simConfig{agents: 100, duration: 30 * time.Second, heartbeat: 10 * time.Second, poll: 30 * time.Second, change: time.Minute}
	if v := os.Getenv("PROPAGIT_SIM_AGENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("PROPAGIT_SIM_AGENTS=%q: want a positive number", v)
		}
		c.agents = n
	}
	if v := os.Getenv("PROPAGIT_SIM_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("PROPAGIT_SIM_DURATION=%q: want a positive duration", v)
		}
		c.duration = d
	}
	return c
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// simStore is what a pull agent does with its store.
type simStore interface {
	ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error)
	PutStatus(ctx context.Context, cluster string, st *workv1alpha1.WorkStatus) error
	GetStatus(ctx context.Context, cluster string) (*workv1alpha1.WorkStatus, error)
}

// simResult is what one simulation measured.
type simResult struct {
	elapsed   time.Duration
	latencies []time.Duration
	// failed are writes and fetches that returned an error after the
	// store's retries (the agent tries again at its next tick); lost are
	// statuses that do not hold their agent's last successful write.
	failed, lost int64
	// reasons counts the failures by error text (cluster names cut), so
	// a report says why they failed.
	reasons map[string]int
}

// fail counts a failure and its reason. A client that gives up waiting
// because the run ends before its turn is the end of the run, not a
// failure.
func (r *simResult) fail(mu *sync.Mutex, err error) {
	if strings.Contains(err.Error(), "would exceed context deadline") {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if r.reasons == nil {
		r.reasons = map[string]int{}
	}
	msg := err.Error()
	for _, f := range strings.Fields(msg) {
		if strings.Contains(f, "m0") || strings.Contains(f, "propagit-member-") {
			msg = strings.ReplaceAll(msg, f, "…")
		}
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	r.reasons[msg]++
	r.failed++
}

func (r *simResult) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
}

// simulate runs one agent per cluster for cfg.duration, each with a store
// of its own from newStore: a Work fetch every poll interval, a status
// write at every heartbeat tick (a transition every change interval, a
// heartbeat otherwise). Afterwards every cluster's status must hold its
// agent's last successful write or a newer one; a write that failed after
// its retries is counted as failed.
func simulate(ctx context.Context, b *testing.B, cfg simConfig, clusters []string, newStore func(cluster string) simStore, reader simStore) *simResult {
	var (
		mu   sync.Mutex
		res  = &simResult{}
		lost = atomic.Int64{}
		last = make([]string, len(clusters))
	)
	runCtx, stop := context.WithTimeout(ctx, cfg.duration)
	defer stop()
	var wg sync.WaitGroup
	start := time.Now()
	for i, cluster := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newStore(cluster)
			if g == nil {
				return
			}
			// Spread the agents over the interval, as agents that started
			// at different times are.
			select {
			case <-runCtx.Done():
				return
			case <-time.After(time.Duration(i) * cfg.heartbeat / time.Duration(len(clusters))):
			}
			rev, nextChange, nextPoll := 0, time.Now(), time.Now()
			tick := time.NewTicker(cfg.heartbeat)
			defer tick.Stop()
			for {
				now := time.Now()
				if !now.Before(nextPoll) {
					if _, err := g.ListCluster(runCtx, cluster); err != nil && runCtx.Err() == nil {
						res.fail(&mu, err)
					}
					nextPoll = now.Add(cfg.poll)
				}
				if !now.Before(nextChange) {
					rev++
					nextChange = now.Add(cfg.change)
				}
				revision := fmt.Sprintf("r%d", rev)
				t0 := time.Now()
				err := g.PutStatus(runCtx, cluster, testStatus(revision, metav1.ConditionTrue, t0))
				took := time.Since(t0)
				switch {
				case err != nil && runCtx.Err() == nil:
					res.fail(&mu, err)
				case err == nil:
					mu.Lock()
					res.latencies = append(res.latencies, took)
					last[i] = revision
					mu.Unlock()
				}
				select {
				case <-runCtx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	// A write cut short by the end of the run may still land: a status
	// newer than the last acknowledged write is not a loss, an older one is.
	revNumber := func(rev string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(rev, "r"))
		return n
	}
	for i, cluster := range clusters {
		if last[i] == "" {
			continue
		}
		if st, err := reader.GetStatus(ctx, cluster); err != nil || revNumber(st.AppliedRevision) < revNumber(last[i]) {
			lost.Add(1)
		}
	}
	res.lost = lost.Load()
	slices.Sort(res.latencies)
	return res
}

// simContext bounds a simulation: its run plus time to set up and check.
func simContext(b *testing.B, cfg simConfig) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// simWorks is one small Work per cluster, as the controller records them.
func simWorks(n int) ([]string, []*workv1alpha1.Work) {
	clusters := make([]string, n)
	var ws []*workv1alpha1.Work
	for i := range clusters {
		clusters[i] = fmt.Sprintf("m%04d", i)
		ws = append(ws, newTestWork(clusters[i], "r0", configMap("app", "settings", map[string]any{"k": "v"})))
	}
	return clusters, ws
}

func reportSim(b *testing.B, cfg simConfig, res *simResult, writes int64) {
	b.ReportMetric(float64(cfg.agents), "agents")
	b.ReportMetric(float64(writes)/res.elapsed.Minutes(), "writes/min")
	b.ReportMetric(float64(res.pct(0.50).Milliseconds()), "p50-status-ms")
	b.ReportMetric(float64(res.pct(0.99).Milliseconds()), "p99-status-ms")
	b.ReportMetric(float64(res.lost), "lost")
	b.ReportMetric(float64(res.failed), "failed")
	b.Logf("%d agents for %s: %.0f writes/min, status write p50 %s p99 %s, %d of %d writes failed after retries, %d statuses lost",
		cfg.agents, res.elapsed.Round(time.Second), float64(writes)/res.elapsed.Minutes(), res.pct(0.5), res.pct(0.99),
		res.failed, int64(len(res.latencies))+res.failed, res.lost)
	for msg, n := range res.reasons {
		b.Logf("failed %d×: %s", n, msg)
	}
	if res.lost > 0 {
		b.Errorf("%d statuses do not hold their agent's last successful write", res.lost)
	}
}

// BenchmarkGitStoreAgents simulates pull agents on the Git store's shared
// layout over the real smart-HTTP server (git http-backend), each agent a
// goroutine with its own gitstore.Store as an agent process has. writes/min are
// the pushes the server took; it also reports the repository's growth per
// day and what one agent's Work fetch costs from a cold cache.
func BenchmarkGitStoreAgents(b *testing.B) {
	cfg := simFromEnv(b)
	for b.Loop() {
		r := httpRemote(b)
		ctx := simContext(b, cfg)
		clusters, ws := simWorks(cfg.agents)
		if _, err := r.store(b).Put(ctx, "r0", ws); err != nil {
			b.Fatal(err)
		}
		sizeBefore, pushesBefore := dirSize(r.Dir), r.Srv.Pushes()
		res := simulate(ctx, b, cfg, clusters, func(cluster string) simStore {
			return r.store(b, func(o *gitstore.Options) { o.HeartbeatInterval = cfg.heartbeat })
		}, r.store(b))
		pushes := r.Srv.Pushes() - pushesBefore
		growth := dirSize(r.Dir) - sizeBefore
		reportSim(b, cfg, res, pushes)
		sent := r.Srv.BytesSent()
		t0 := time.Now()
		if w, err := r.store(b).ListCluster(ctx, clusters[0]); err != nil || w == nil {
			b.Fatalf("fetching one Work: %v", err)
		}
		fetch, fetchBytes := time.Since(t0), r.Srv.BytesSent()-sent
		b.ReportMetric(float64(growth)/res.elapsed.Hours()*24/(1<<20), "repo-MiB/day")
		b.ReportMetric(float64(fetch.Milliseconds()), "fetch-one-work-ms")
		b.ReportMetric(float64(fetchBytes)/1024, "fetch-one-work-KiB")
	}
}

// BenchmarkMemberGitStoreAgents is the same load on the Git store with one
// works repository per member (--works-repo …{cluster}…) behind the same
// smart-HTTP server: each agent pushes to its own repository, so no agent
// waits for another's ref update; growth is summed over the repositories.
func BenchmarkMemberGitStoreAgents(b *testing.B) {
	cfg := simFromEnv(b)
	for b.Loop() {
		srv, err := gitserver.New(b.TempDir(), gitserver.Options{Username: "agent", Password: "s3cret"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		auth := &githttp.BasicAuth{Username: "agent", Password: "s3cret"}
		ctx := simContext(b, cfg)
		clusters, ws := simWorks(cfg.agents)
		for _, c := range clusters {
			if _, err := srv.InitBare("works-" + c + ".git"); err != nil {
				b.Fatal(err)
			}
		}
		tmpl := srv.URL + "/works-{cluster}.git"
		m, err := memberstore.New(tmpl, gitstore.Options{Auth: auth}, logr.Discard())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Put(ctx, "r0", ws); err != nil {
			b.Fatal(err)
		}
		sizeBefore, pushesBefore := dirSize(srv.Root), srv.Pushes()
		res := simulate(ctx, b, cfg, clusters, func(cluster string) simStore {
			g, err := gitstore.New(gitstore.Options{URL: strings.ReplaceAll(tmpl, "{cluster}", cluster), Auth: auth, HeartbeatInterval: cfg.heartbeat})
			if err != nil {
				b.Error(err)
				return nil
			}
			return g
		}, m)
		pushes := srv.Pushes() - pushesBefore
		growth := dirSize(srv.Root) - sizeBefore
		reportSim(b, cfg, res, pushes)
		sent := srv.BytesSent()
		t0 := time.Now()
		one, err := gitstore.New(gitstore.Options{URL: strings.ReplaceAll(tmpl, "{cluster}", clusters[0]), Auth: auth})
		if err != nil {
			b.Fatal(err)
		}
		if w, err := one.ListCluster(ctx, clusters[0]); err != nil || w == nil {
			b.Fatalf("fetching one Work: %v", err)
		}
		fetch, fetchBytes := time.Since(t0), srv.BytesSent()-sent
		b.ReportMetric(float64(growth)/res.elapsed.Hours()*24/(1<<20), "repos-MiB/day")
		b.ReportMetric(float64(fetch.Milliseconds()), "fetch-one-work-ms")
		b.ReportMetric(float64(fetchBytes)/1024, "fetch-one-work-KiB")
	}
}

// BenchmarkCRStoreAgents is the same load on Work custom resources on a
// real apiserver (one namespace per member): writes/min are the status
// updates the apiserver took (a heartbeat is one when due).
func BenchmarkCRStoreAgents(b *testing.B) {
	cfg := simFromEnv(b)
	for b.Loop() {
		c := hub(b)
		ctx := simContext(b, cfg)
		clusters, ws := simWorks(cfg.agents)
		s := crstore.New(c, "propagit-system")
		if _, err := s.Put(ctx, "r0", ws); err != nil {
			b.Fatal(err)
		}
		var writes atomic.Int64
		res := simulate(ctx, b, cfg, clusters, func(cluster string) simStore {
			// Each agent has its own client and so its own client-side
			// rate limit, client-go's default, as an agent process has.
			agentCfg := rest.CopyConfig(workstest.HubConfig())
			agentCfg.QPS, agentCfg.Burst = 5, 10
			ac, err := client.New(agentCfg, client.Options{Scheme: c.Scheme()})
			if err != nil {
				b.Error(err)
				return nil
			}
			return crstore.New(countingClient{Client: ac, writes: &writes}, "propagit-system", crstore.WithHeartbeatInterval(cfg.heartbeat))
		}, s)
		reportSim(b, cfg, res, writes.Load())
	}
}

// countingClient counts the status updates that reach the apiserver (the
// store skips those that change nothing), adding no request of its own.
type countingClient struct {
	client.Client
	writes *atomic.Int64
}

func (c countingClient) Status() client.SubResourceWriter {
	return countingWriter{SubResourceWriter: c.Client.Status(), writes: c.writes}
}

type countingWriter struct {
	client.SubResourceWriter
	writes *atomic.Int64
}

func (w countingWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	err := w.SubResourceWriter.Update(ctx, obj, opts...)
	if err == nil {
		w.writes.Add(1)
	}
	return err
}

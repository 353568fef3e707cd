package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/webhook"
)

// The benchmarks of the Performance section of issue 6. Each starts three
// real members, a Git remote over smart HTTP and the controller in-process,
// polling only every benchInterval: a fetch starts only when a signed GitHub
// push event reaches the real webhook handler. Run them with
//
//	go test -run '^$' -bench BenchmarkSync -benchtime 5x -timeout 30m ./e2e/
//
// With PROPAGIT_BENCH_CPUPROFILE=file, the timed commits alone (not the
// setup, which applies the whole fleet) are CPU-profiled into file.
const (
	benchMembers = 3
	// benchInterval is the controller's poll interval: longer than a run,
	// so that only the webhook starts a fetch.
	benchInterval = time.Hour
	// benchSetup bounds the first apply of a whole fleet.
	benchSetup = 10 * time.Minute
	// benchSecret is the GitHub webhook secret.
	benchSecret = "bench-webhook-secret"
	// watchTimeout is asked of the apiservers for the benchmark's own
	// watches: longer than a run, so that only a watch that fell behind is
	// re-opened.
	watchTimeout = time.Hour
)

// BenchmarkSyncWebhook measures push-to-applied latency with the webhook on
// 3 members × 100 objects (issue 6: p50 under 2 s).
//
// The fleet is 100 ConfigMaps in one namespace, sent to the three members by
// one PropagationPolicy. Each iteration commits and pushes a new value for
// all 100 (untimed), then times from just before the signed push event is
// posted until a watch on every member has seen all 100 ConfigMaps with the
// new value: 300 objects written. It then waits, untimed, until every
// member's status records the revision, so iterations do not overlap.
// ns/op is the mean latency; s-p50 and s-p90 are its percentiles.
func BenchmarkSyncWebhook(b *testing.B) {
	const objects = 100
	env := testenv.Start(b, testenv.Options{Members: benchMembers})
	names := memberNames(env.Members)
	remote := e2etest.HTTPRemote(b)
	co := newCheckout(b, remote)
	ns := randomNamespace("bench")
	co.ConfigMapFleet(ns, names...)
	writeConfigMaps(co, ns, objects, "v0")
	rev := co.CommitPush("100 ConfigMaps")
	fw := watchFleet(b, env.Members, names)
	hook, status, probe := startBenchController(b, remote, env.Members)
	fw.wait(benchSetup, fw.allValue(objects, "v0"))
	status.waitApplied(rev, names...)

	var lat []time.Duration
	var cost commitCosts
	defer profileCommits(b)()
	for i := 1; b.Loop(); i++ {
		b.StopTimer()
		v := fmt.Sprintf("v%d", i)
		writeConfigMaps(co, ns, objects, v)
		rev := co.CommitPush("set " + v)
		before := probe.snapshot()
		settleHeap()
		b.StartTimer()
		start := time.Now()
		hook.push(rev)
		fw.wait(converge, fw.allValue(objects, v))
		lat = append(lat, time.Since(start))
		b.StopTimer()
		status.waitApplied(rev, names...)
		cost = cost.add(probe.snapshot().sub(before))
		b.StartTimer()
	}
	for _, m := range env.Members {
		checkValues(b, m, ns, objects, fmt.Sprintf("v%d", len(lat)))
	}
	cost.report(b, len(lat))
	reportLatency(b, lat, fmt.Sprintf("push→%d objects applied on %d members (webhook)", objects, benchMembers))
}

// BenchmarkSyncOneTemplateChange measures what a commit changing one
// template of 2,000 costs on 3 members (issue 6: p50 under 1 s, and only
// that template's objects written; issue 32: p50 under 0.3 s).
//
// The fleet is 2,000 ConfigMaps over 10 namespaces, one PropagationPolicy
// per namespace sending them to the three members; its first apply is not
// timed. Each iteration commits and pushes a new value for one ConfigMap
// (untimed), scrapes every member's apiserver_request_total, then times
// from just before the signed push event is posted (the webhook triggers the
// fetch) until a watch on every member has seen the new value. It then
// waits, untimed, until every member's status records the revision (the
// member is done with the commit: apply, health, status) and scrapes again.
//
// Reported per member and commit: reads (GET, LIST, WATCH opened) and
// writes (POST, PUT, PATCH, APPLY, DELETE) the apiserver received, without
// the benchmark's own scrapes and watch re-opens and without the requests
// an idle apiserver sends itself (apiserverOwn, logged apart). cm-writes
// are the writes to ConfigMaps and cm-changed the ConfigMaps that really
// changed (watch events); 1 is the ideal for both. The breakdown by verb
// and resource is logged. Periodic drift checks are off: they are not part
// of a commit's cost.
//
// It fails (issue 32) when a commit renders more than its one template,
// writes more blobs than the changed object's and each member's work.yaml,
// or encodes more than one status entry per member:
// what a commit costs must follow what it changed, not the fleet. The
// stages of each commit (see propagit_reconcile_stage_seconds) are logged.
func BenchmarkSyncOneTemplateChange(b *testing.B) {
	benchOneTemplate(b, 10, 200, benchMembers)
}

// BenchmarkSyncOneTemplateChangeLarge is BenchmarkSyncOneTemplateChange on
// 10,000 templates and 4 members (issue 32: p50 under 0.5 s).
func BenchmarkSyncOneTemplateChangeLarge(b *testing.B) {
	benchOneTemplate(b, 50, 200, 4)
}

// benchOneTemplate is BenchmarkSyncOneTemplateChange with namespaces ×
// perNamespace templates on the given number of members.
func benchOneTemplate(b *testing.B, namespaces, perNamespace, members int) {
	env := testenv.Start(b, testenv.Options{Members: members})
	names := memberNames(env.Members)
	remote := e2etest.HTTPRemote(b)
	co := newCheckout(b, remote)
	prefix := randomNamespace("big")
	for _, name := range names {
		co.Write(fleetDir+"/clusters/"+name+".yaml", clusterYAML(name))
	}
	nsName := func(i int) string { return fmt.Sprintf("%s-%d", prefix, i) }
	for i := range namespaces {
		ns := nsName(i)
		co.Write(fleetDir+"/"+ns+"/namespace.yaml", e2etest.NamespaceYAML(ns))
		co.Write(fleetDir+"/"+ns+"/policy.yaml", configMapsPolicyYAML(ns, names...))
		writeConfigMaps(co, ns, perNamespace, "v0")
	}
	rev := co.CommitPush("2,000 ConfigMaps")
	fw := watchFleet(b, env.Members, names)
	hook, status, probe := startBenchController(b, remote, env.Members)
	began := time.Now()
	fw.wait(benchSetup, fw.allValue(namespaces*perNamespace, "v0"))
	status.waitApplied(rev, names...)
	b.Logf("setup: %d ConfigMaps applied on %d members in %s", namespaces*perNamespace, members, time.Since(began).Round(time.Second))
	probe.settle(hook, rev)

	var lat []time.Duration
	total := make([]requestCounts, len(env.Members))
	var changed []int
	var cost commitCosts
	stopProfile := profileCommits(b)
	for i := 1; b.Loop(); i++ {
		b.StopTimer()
		// A different template every time, in a different namespace.
		k := (i * 613) % (namespaces * perNamespace)
		ns, name, v := nsName(k/perNamespace), configMapName(k%perNamespace), fmt.Sprintf("v%d", i)
		co.Write(configMapPath(ns, name), e2etest.ConfigMapYAML(ns, name, v))
		rev := co.CommitPush("set " + ns + "/" + name + " to " + v)
		before, opens := scrapeRequests(b, env.Members), fw.watchOpens()
		fw.resetEvents()
		costBefore := probe.snapshot()
		settleHeap()
		b.StartTimer()
		start := time.Now()
		hook.push(rev)
		fw.wait(converge, fw.valueIs(ns+"/"+name, v))
		lat = append(lat, time.Since(start))
		b.StopTimer()
		status.waitApplied(rev, names...)
		after, reopened := scrapeRequests(b, env.Members), fw.watchOpens()
		for m := range env.Members {
			d := after[m].sub(before[m])
			d.drop("WATCH configmaps", float64(reopened[m]-opens[m])) // the benchmark's own
			total[m] = total[m].add(d)
		}
		changed = append(changed, fw.eventCounts()...)
		c := probe.snapshot().sub(costBefore)
		c.guardOneTemplate(b, i, members)
		cost = cost.add(c)
		b.StartTimer()
	}
	stopProfile()
	cost.report(b, len(lat))

	commits := float64(len(lat))
	var reads, writes, cmWrites float64
	for m, c := range total {
		own := c.take(apiserverOwn...)
		r, w := c.sum(readVerbs, ""), c.sum(writeVerbs, "")
		reads, writes, cmWrites = reads+r, writes+w, cmWrites+c.sum(writeVerbs, "configmaps")
		b.Logf("%s per commit: %.1f reads, %.1f writes: %s; and the apiserver's own: %s",
			names[m], r/commits, w/commits, c.scaled(1/commits), own.scaled(1/commits))
	}
	perMember := commits * float64(len(env.Members))
	b.ReportMetric(reads/perMember, "reads/member")
	b.ReportMetric(writes/perMember, "writes/member")
	b.ReportMetric(cmWrites/perMember, "cm-writes/member")
	b.ReportMetric(mean(changed), "cm-changed/member")
	b.Logf("per commit and member: %.1f reads, %.1f writes (%.1f to ConfigMaps); ConfigMaps changed (watch events per member and commit): %v",
		reads/perMember, writes/perMember, cmWrites/perMember, changed)
	reportLatency(b, lat, fmt.Sprintf("push→1 of %d templates applied on %d members (webhook)", namespaces*perNamespace, members))
}

// settleHeap collects the garbage the benchmark itself made between two
// timed commits (its Git working copy, the members' /metrics it parsed,
// the status it polled: more than the controller allocates), as testing.B
// does before a run, so that a timed commit pays only for the collections
// its own allocations cause. The controller runs in this process; a
// deployed one does not share its heap with a test harness.
func settleHeap() { runtime.GC() }

// profileCommits starts a CPU profile into $PROPAGIT_BENCH_CPUPROFILE, if
// set, writes the allocations so far to $PROPAGIT_BENCH_MEMPROFILE.base,
// if that is set, and returns what stops them: the allocations profile at
// the end goes to $PROPAGIT_BENCH_MEMPROFILE, to read with
// `go tool pprof -sample_index=alloc_space -base FILE.base FILE`.
func profileCommits(b *testing.B) func() {
	stopMem := memProfile(b, os.Getenv("PROPAGIT_BENCH_MEMPROFILE"))
	path := os.Getenv("PROPAGIT_BENCH_CPUPROFILE")
	if path == "" {
		return stopMem
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
		b.Logf("CPU profile of the timed commits: %s", path)
		stopMem()
	}
}

// memProfile writes the allocations profile to path.base now and to path
// when the returned func is called; nothing when path is "".
func memProfile(b *testing.B, path string) func() {
	if path == "" {
		return func() {}
	}
	write := func(p string) {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	write(path + ".base")
	return func() {
		write(path)
		b.Logf("allocations of the timed commits: go tool pprof -sample_index=alloc_space -base %s.base %s", path, path)
	}
}

func configMapName(i int) string { return fmt.Sprintf("cm-%04d", i) }

func configMapPath(ns, name string) string { return fleetDir + "/" + ns + "/" + name + ".yaml" }

// writeConfigMaps writes n ConfigMaps of ns with the given value, one file
// each.
func writeConfigMaps(co *e2etest.Checkout, ns string, n int, value string) {
	for i := range n {
		co.Write(configMapPath(ns, configMapName(i)), e2etest.ConfigMapYAML(ns, configMapName(i), value))
	}
}

// checkValues fails the benchmark unless a LIST on m shows the n
// ConfigMaps of ns with the value want.
func checkValues(t testing.TB, m *testenv.Member, ns string, n int, want string) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	list, err := m.Client().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: labelManaged + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, cm := range list.Items {
		if cm.Data["value"] == want {
			got++
		}
	}
	if got != n || len(list.Items) != n {
		t.Fatalf("%s: %d of %d ConfigMaps in %s have value %q, want all %d", m.Name, got, len(list.Items), ns, want, n)
	}
}

// startBenchController starts the controller over remote and members with
// polling every benchInterval and drift checks off, serves the real webhook
// handler in front of it (wired as internal/cli/webhook.go wires it), and
// returns the webhook, a reader of the status it records and a probe of
// what its commits cost.
func startBenchController(t testing.TB, remote *e2etest.Remote, members []*testenv.Member) (*githubHook, *statusReader, *costProbe) {
	t.Helper()
	opts := controllerOptions()
	opts.Interval = benchInterval
	opts.ProbeInterval = controller.DefaultOptions().ProbeInterval // as deployed: a burst of pushes probes once
	opts.Deliver.DriftInterval = 0
	probe := &costProbe{t: t, reg: prometheus.NewRegistry(), members: members}
	opts.Metrics = metrics.NewRecorder()
	opts.Metrics.MustRegister(probe.reg)
	r := startControllerOpts(t, newSetup(t, remote, members...), opts)
	probe.c = r.Controller
	return serveWebhook(t, r.Controller), newStatusReader(t, remote), probe
}

// githubHook posts GitHub push events to the webhook handler.
type githubHook struct {
	t   testing.TB
	url string
}

// serveWebhook serves webhook.NewHandler, with a GitHub secret, on Path of
// a local HTTP server; an accepted event triggers c.
func serveWebhook(t testing.TB, c *controller.Controller) *githubHook {
	opts := webhook.DefaultOptions()
	opts.Branch = branch
	opts.GitHubSecret = []byte(benchSecret)
	mux := http.NewServeMux()
	mux.Handle(webhook.Path, webhook.NewHandler(opts, func(string) { c.Trigger() }, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &githubHook{t: t, url: srv.URL + webhook.Path}
}

// push posts a push event for rev on the followed branch, signed with
// HMAC-SHA256 as GitHub signs it, and fails unless it is accepted.
func (h *githubHook) push(rev string) {
	h.t.Helper()
	body := fmt.Appendf(nil, `{"ref":"refs/heads/%s","after":%q}`, branch, rev)
	code, msg := e2etest.PostGitHubPush(h.t, h.url, benchSecret, body)
	if code != http.StatusAccepted {
		h.t.Fatalf("webhook: %d %s, want 202", code, bytes.TrimSpace(msg))
	}
}

// fleetWatch follows the ConfigMaps propagit manages on every member with
// one LIST and one long-running WATCH per member, opened at the start, so
// that waiting on the members costs them no request. The apiserver closes
// a watch that falls behind a burst of events; it is then re-opened from
// the last event seen, and counted.
type fleetWatch struct {
	t      testing.TB
	names  []string
	wake   chan struct{} // one pending wake-up for wait
	mu     sync.Mutex
	values []map[string]string // per member: namespace/name → data.value
	counts []map[string]int    // per member: data.value → ConfigMaps with it
	events []int               // per member: changes seen since resetEvents
	opens  []int               // per member: WATCH requests sent
	err    error               // why a watch ended
}

// watchFleet lists and watches the managed ConfigMaps of every member until
// the benchmark ends.
func watchFleet(t testing.TB, members []*testenv.Member, names []string) *fleetWatch {
	t.Helper()
	n := len(members)
	w := &fleetWatch{t: t, names: names, wake: make(chan struct{}, 1), events: make([]int, n), opens: make([]int, n)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	selector := labelManaged + "=true"
	timeout := int64(watchTimeout.Seconds())
	for i, m := range members {
		w.values, w.counts = append(w.values, map[string]string{}), append(w.counts, map[string]int{})
		lctx, lcancel := kubeCtx()
		list, err := m.Client().CoreV1().ConfigMaps("").List(lctx, metav1.ListOptions{LabelSelector: selector})
		lcancel()
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		for j := range list.Items {
			w.set(i, &list.Items[j], false)
		}
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector, o.TimeoutSeconds = selector, &timeout
			w.mu.Lock()
			w.opens[i]++
			w.mu.Unlock()
			return m.Client().CoreV1().ConfigMaps("").Watch(ctx, o)
		}}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		go w.follow(i, rw)
	}
	return w
}

// follow applies the events of member i's watch until it ends.
func (w *fleetWatch) follow(i int, wi watch.Interface) {
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Bookmark {
			continue
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		w.mu.Lock()
		if ok {
			w.set(i, cm, ev.Type == watch.Deleted)
			w.events[i]++
		} else {
			w.err = fmt.Errorf("%s: watch event %s: %v", w.names[i], ev.Type, ev.Object)
		}
		w.mu.Unlock()
		w.poke()
		if !ok {
			return
		}
	}
	w.mu.Lock()
	if w.err == nil {
		w.err = fmt.Errorf("%s: the watch ended", w.names[i])
	}
	w.mu.Unlock()
	w.poke()
}

// set records cm's value on member i, or its deletion; w.mu is held or w
// not shared yet.
func (w *fleetWatch) set(i int, cm *corev1.ConfigMap, deleted bool) {
	key := cm.Namespace + "/" + cm.Name
	if old, ok := w.values[i][key]; ok {
		w.counts[i][old]--
		delete(w.values[i], key)
	}
	if !deleted {
		w.values[i][key] = cm.Data["value"]
		w.counts[i][cm.Data["value"]]++
	}
}

func (w *fleetWatch) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// wait waits until cond holds for every member, woken by each watch event,
// and fails the benchmark with cond's message when it does not within
// timeout or a watch ends.
func (w *fleetWatch) wait(timeout time.Duration, cond func(member int) (bool, string)) {
	w.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok, msg, err := true, "", w.err
		for i := range w.names {
			if ok, msg = cond(i); !ok {
				msg = w.names[i] + ": " + msg
				break
			}
		}
		w.mu.Unlock()
		switch {
		case ok:
			return
		case err != nil:
			w.t.Fatalf("%v; last state: %s", err, msg)
		}
		select {
		case <-w.wake:
		case <-deadline.C:
			w.t.Fatalf("members not there within %s; last state: %s", timeout, msg)
		}
	}
}

// allValue holds when a member has exactly n managed ConfigMaps, all with
// value v.
func (w *fleetWatch) allValue(n int, v string) func(int) (bool, string) {
	return func(i int) (bool, string) {
		got := w.counts[i][v]
		return got == n && len(w.values[i]) == n, fmt.Sprintf("%d of %d ConfigMaps have value %q", got, len(w.values[i]), v)
	}
}

// valueIs holds when the ConfigMap key (namespace/name) has value v.
func (w *fleetWatch) valueIs(key, v string) func(int) (bool, string) {
	return func(i int) (bool, string) {
		got := w.values[i][key]
		return got == v, fmt.Sprintf("%s has value %q, want %q", key, got, v)
	}
}

// resetEvents starts counting the watch events again.
func (w *fleetWatch) resetEvents() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.events)
}

// eventCounts returns the watch events per member since resetEvents.
func (w *fleetWatch) eventCounts() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

// watchOpens returns the WATCH requests sent to each member so far.
func (w *fleetWatch) watchOpens() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.opens)
}

// requestCounts is a member's apiserver requests by verb and resource,
// keyed "VERB resource[/subresource]" ("VERB /path" for a non-resource
// request). apiserver_request_total counts a request when it completes,
// a WATCH when it ends; the WATCH entries add the watches open
// (apiserver_longrunning_requests), so that their difference between two
// scrapes is the watches opened in between.
type requestCounts map[string]float64

// Verbs as apiserver_request_total labels them.
var (
	readVerbs  = []string{"GET", "LIST", "WATCH", "WATCHLIST"}
	writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}
)

// apiserverOwn are the requests an idle member's apiserver sends itself
// (measured: GET openapi/v3 every 5 s, PUT of its identity lease every
// 10 s); they are reported apart.
var apiserverOwn = []string{"GET openapi/v3", "PUT leases"}

// scrapeRequests reads every member's request counts from its /metrics,
// with the member's admin credentials.
func scrapeRequests(t testing.TB, members []*testenv.Member) []requestCounts {
	t.Helper()
	out := make([]requestCounts, len(members))
	for i, m := range members {
		ctx, cancel := kubeCtx()
		raw, err := m.Client().Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: GET /metrics: %v", m.Name, err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: /metrics: %v", m.Name, err)
		}
		c := requestCounts{}
		for _, s := range fams["apiserver_request_total"].GetMetric() {
			c[requestKey(s)] += s.GetCounter().GetValue()
		}
		for _, s := range fams["apiserver_longrunning_requests"].GetMetric() {
			if k := requestKey(s); strings.HasPrefix(k, "WATCH ") {
				c[k] += s.GetGauge().GetValue()
			}
		}
		out[i] = c
	}
	return out
}

// requestKey is the requestCounts key of a series.
func requestKey(s *dto.Metric) string {
	l := map[string]string{}
	for _, p := range s.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	switch {
	case l["resource"] == "":
		return l["verb"] + " " + l["subresource"] // the path
	case l["subresource"] != "":
		return l["verb"] + " " + l["resource"] + "/" + l["subresource"]
	}
	return l["verb"] + " " + l["resource"]
}

// sub returns c minus before, without the zero entries and without the
// benchmark's own GET /metrics.
func (c requestCounts) sub(before requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 && k != "GET /metrics" {
			out[k] = d
		}
	}
	return out
}

// add returns c plus d.
func (c requestCounts) add(d requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range c {
		out[k] = v
	}
	for k, v := range d {
		out[k] += v
	}
	return out
}

// take removes the keys from c and returns them.
func (c requestCounts) take(keys ...string) requestCounts {
	out := requestCounts{}
	for _, k := range keys {
		if v, ok := c[k]; ok {
			out[k] = v
			delete(c, k)
		}
	}
	return out
}

// drop takes n requests off key, deleting it when none are left.
func (c requestCounts) drop(key string, n float64) {
	if c[key] -= n; c[key] == 0 {
		delete(c, key)
	}
}

// sum adds up the requests with one of verbs, to resource ("" for any).
func (c requestCounts) sum(verbs []string, resource string) float64 {
	total := 0.0
	for k, v := range c {
		verb, what, _ := strings.Cut(k, " ")
		if slices.Contains(verbs, verb) && (resource == "" || what == resource) {
			total += v
		}
	}
	return total
}

// scaled renders c times f, sorted by key.
func (c requestCounts) scaled(f float64) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.4g", k, c[k]*f)
	}
	return strings.Join(parts, ", ")
}

// reportLatency reports the percentiles of lat (nearest rank) and logs
// them with every sample.
func reportLatency(b *testing.B, lat []time.Duration, what string) {
	if len(lat) == 0 {
		return
	}
	p50, p90 := percentile(lat, 0.5), percentile(lat, 0.9)
	b.ReportMetric(p50.Seconds(), "s-p50")
	b.ReportMetric(p90.Seconds(), "s-p90")
	b.Logf("%s over %d commits: p50 %s, p90 %s, all %v", what, len(lat),
		p50.Round(time.Millisecond), p90.Round(time.Millisecond), roundAll(lat))
}

// percentile returns the nearest-rank q-quantile of ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}

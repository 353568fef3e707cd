package sync

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestSyncWebhookReachesMembers: with polling at 1h, only a signed GitHub
// push event makes a commit reach the three members; a forged signature is
// refused with 401 and starts nothing.
func TestSyncWebhookReachesMembers(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 3})
	ms := env.Members
	co := newRemoteAndCheckout(t)
	ns := randomNamespace("hook")
	co.configMapFleet(ns, "v0", ms[0].Name, ms[1].Name, ms[2].Name)
	co.CommitPush("fleet")
	p := startController(t, co.url, e2etest.KubeconfigDir(t, ms...))
	d := waitValue(t, ns, "v0", ms...)
	t.Logf("first revision on 3 members %s after the controller served /metrics", d.Round(10*time.Millisecond))

	var lat []time.Duration
	for i := 1; i <= 5; i++ {
		v := fmt.Sprintf("v%d", i)
		co.setValue(ns, v)
		co.CommitPush("set " + v)
		pushed := time.Now()
		if code := p.postPush(secret); code != http.StatusAccepted {
			t.Fatalf("signed push event: status %d, want 202", code)
		}
		waitValue(t, ns, v, ms...)
		lat = append(lat, time.Since(pushed))
	}
	t.Logf("push→applied on 3 members over %d webhooks: p50 %s, max %s (all %v)", len(lat),
		percentile(lat, 0.5).Round(time.Millisecond), percentile(lat, 1).Round(time.Millisecond), lat)

	// A forged signature: refused, counted, and the commit stays unapplied.
	co.setValue(ns, "forged")
	co.CommitPush("set forged")
	before := p.webhookCount("bad_signature")
	if code := p.postPush("not-the-secret"); code != http.StatusUnauthorized {
		t.Fatalf("forged push event: status %d, want 401", code)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		got := p.webhookCount("bad_signature")
		return got == before+1, fmt.Sprintf("bad_signature went %v → %v", before, got)
	})
	// The request was handled (counted) and answered; with polling at 1h
	// nothing else can start a fetch, so the members keep v5.
	for _, m := range ms {
		got, err := memberValue(m, ns)
		if err != nil {
			t.Fatal(err)
		}
		if got != "v5" {
			t.Errorf("%s: value %q after a forged webhook, want v5 (the forged request started a fetch)", m.Name, got)
		}
	}
	// The next valid webhook, and only it, brings the commit.
	if code := p.postPush(secret); code != http.StatusAccepted {
		t.Fatalf("signed push event: status %d, want 202", code)
	}
	waitValue(t, ns, "forged", ms...)
	if got := p.webhookCount("accepted"); got != 6 {
		t.Errorf("accepted webhooks = %v, want 6", got)
	}
}

// TestSyncMetricsScraped scrapes /metrics of a controller that has applied
// a revision and asserts the key series.
func TestSyncMetricsScraped(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	co := newRemoteAndCheckout(t)
	ns := randomNamespace("metrics")
	co.configMapFleet(ns, "v0", m.Name)
	co.CommitPush("fleet")
	p := startController(t, co.url, e2etest.KubeconfigDir(t, m))
	waitValue(t, ns, "v0", m)
	if code := p.postPush(secret); code != http.StatusAccepted {
		t.Fatalf("signed push event: status %d, want 202", code)
	}
	type check struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
		want   string
	}
	checks := []check{
		{"propagit_cluster_ready_condition", map[string]string{"cluster": m.Name, "status": "True"}, func(v float64) bool { return v == 1 }, "1"},
		{"propagit_cluster_ready_condition", map[string]string{"cluster": m.Name, "status": "False"}, func(v float64) bool { return v == 0 }, "0"},
		{"propagit_apply_total", map[string]string{"cluster": m.Name, "result": "success"}, func(v float64) bool { return v >= 1 }, ">= 1"},
		{"propagit_reconcile_duration_seconds", nil, func(v float64) bool { return v >= 1 }, "count >= 1"},
		{"propagit_works", map[string]string{"state": "applied"}, func(v float64) bool { return v >= 1 }, ">= 1"},
		{"propagit_webhook_requests_total", map[string]string{"provider": "github", "result": "accepted"}, func(v float64) bool { return v == 1 }, "1"},
		{"propagit_seconds_since_last_apply", map[string]string{"cluster": m.Name}, func(v float64) bool { return v >= 0 && v < 600 }, "in [0, 600)"},
	}
	eventually(t, converge, func() (bool, string) {
		fams, err := p.scrape()
		if err != nil {
			return false, err.Error()
		}
		var bad []string
		for _, c := range checks {
			v, found := metricValue(fams, c.name, c.labels)
			if !found || !c.ok(v) {
				bad = append(bad, fmt.Sprintf("%s%v = %v (present %v), want %s", c.name, c.labels, v, found, c.want))
			}
		}
		for name := range fams {
			if !strings.HasPrefix(name, "propagit_") {
				continue
			}
			for _, mm := range fams[name].GetMetric() {
				for _, l := range mm.GetLabel() {
					if l.GetName() == "revision" || l.GetName() == "uid" {
						bad = append(bad, fmt.Sprintf("%s has an unbounded label %s", name, l.GetName()))
					}
				}
			}
		}
		return len(bad) == 0, strings.Join(bad, "; ")
	})
}

// TestSyncLeaderElection runs two leader-elected controllers (CR store on a
// hub); killing the leader with SIGKILL hands the Lease to the other, which
// then applies a new commit announced by a webhook.
func TestSyncLeaderElection(t *testing.T) {
	const hubNS = "propagit-system"
	env := testenv.Start(t, testenv.Options{Members: 2})
	hub, member := env.Members[0], env.Members[1]
	e2etest.StartHub(t, hub, converge, pollEvery, hubNS)

	co := newRemoteAndCheckout(t)
	ns := randomNamespace("leader")
	co.configMapFleet(ns, "v0", member.Name)
	co.CommitPush("fleet")
	kc := e2etest.KubeconfigDir(t, member)
	flags := []string{"--works-store", "cr", "--hub-kubeconfig", hub.KubeconfigPath, "--controller-namespace", hubNS,
		"--leader-elect", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
		"--leader-elect-retry-period", "1s"}
	a := startController(t, co.url, kc, flags...)
	b := startController(t, co.url, kc, flags...)
	procs := map[int]*proc{a.pid(): a, b.pid(): b}

	holder := func() (string, error) {
		ctx, cancel := kubeCtx()
		defer cancel()
		l, err := hub.Client().CoordinationV1().Leases(hubNS).Get(ctx, "propagit-controller", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if l.Spec.HolderIdentity == nil {
			return "", nil
		}
		return *l.Spec.HolderIdentity, nil
	}
	// byHolder maps a holder identity (<hostname>_<pid>) to its process.
	byHolder := func(id string) *proc {
		i := strings.LastIndex(id, "_")
		if i < 0 {
			return nil
		}
		var pid int
		if _, err := fmt.Sscan(id[i+1:], &pid); err != nil {
			return nil
		}
		return procs[pid]
	}
	var leader *proc
	var first string
	eventually(t, converge, func() (bool, string) {
		id, err := holder()
		if err != nil {
			return false, err.Error()
		}
		first, leader = id, byHolder(id)
		return leader != nil, fmt.Sprintf("lease holder %q (pids %d, %d)", id, a.pid(), b.pid())
	})
	waitValue(t, ns, "v0", member)
	follower := a
	if leader == a {
		follower = b
	}
	t.Logf("leader %s (pid %d); follower pid %d", first, leader.pid(), follower.pid())

	leader.kill()
	killed := time.Now()
	var second string
	eventually(t, 30*time.Second, func() (bool, string) {
		id, err := holder()
		if err != nil {
			return false, err.Error()
		}
		second = id
		return id != first && byHolder(id) == follower, fmt.Sprintf("lease holder %q", id)
	})
	takeover := time.Since(killed)
	t.Logf("takeover: lease held by %s %s after SIGKILL of the leader (lease duration 4s)", second, takeover.Round(10*time.Millisecond))
	// The follower must wait the lease out; the slack is generous, since
	// on a loaded machine its retries (every second) come late.
	if takeover > 4*time.Second+20*time.Second {
		t.Errorf("takeover took %s, want within lease duration 4s + 20s", takeover)
	}

	co.setValue(ns, "v1")
	co.CommitPush("set v1")
	pushed := time.Now()
	if code := follower.postPush(secret); code != http.StatusAccepted {
		t.Fatalf("signed push event to the new leader: status %d, want 202", code)
	}
	waitValue(t, ns, "v1", member)
	t.Logf("new leader applied the next commit %s after its webhook", time.Since(pushed).Round(time.Millisecond))

	// One field manager owns the propagated object: the two replicas did not
	// apply it under different identities.
	ctx, cancel := kubeCtx()
	defer cancel()
	cm, err := member.Client().CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managers := map[string]bool{}
	for _, f := range cm.ManagedFields {
		if f.Operation == metav1.ManagedFieldsOperationApply {
			managers[f.Manager] = true
		}
	}
	if len(managers) != 1 {
		t.Errorf("settings is applied by %d field managers, want 1: %v", len(managers), managers)
	}
}

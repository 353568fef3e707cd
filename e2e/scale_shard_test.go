package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/testenv"
)

// shardLease is the Lease timing the sharded replicas run with.
const shardLease = 4 * time.Second

// shardReplica is one `propagit controller --shard` process.
type shardReplica struct {
	id   string
	cmd  *exec.Cmd
	logs *lockedBuffer
}

// applied returns, per cluster, when this replica logged an apply there.
func (r *shardReplica) applied() map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, line := range strings.Split(r.logs.String(), "\n") {
		var e struct {
			Msg     string  `json:"msg"`
			Cluster string  `json:"cluster"`
			TS      float64 `json:"ts"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Msg != "applied" || e.Cluster == "" {
			continue
		}
		sec := int64(e.TS)
		out[e.Cluster] = append(out[e.Cluster], time.Unix(sec, int64((e.TS-float64(sec))*1e9)))
	}
	return out
}

// TestScaleShardedControllers runs three real controller processes with
// --shard against six real members (started three at a time) and a real
// Git remote. Every member is applied by exactly one replica, the one
// holding its Lease; one replica is killed (SIGKILL, nothing released) and
// its members are taken over once its Leases expire (within two lease
// durations), each by one replica, and a commit made after the kill
// reaches every member, applied there by its new holder alone.
func TestScaleShardedControllers(t *testing.T) {
	bin, err := propagitBinary()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{Members: 6})
	hub := env.Members[0] // member1 also holds the Leases
	ctx := context.Background()
	if _, err := hub.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "propagit-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	var names []string
	for _, m := range env.Members {
		names = append(names, m.Name)
		co.Write(fleetDir+"/clusters/"+m.Name+".yaml", clusterYAML(m.Name))
	}
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML("default", "sharded", "v1")+"---\n"+configMapsPolicyYAML("default", names...))
	first := co.CommitPush("v1")
	kubeconfigs := e2etest.KubeconfigDir(t, env.Members...)

	replicas := map[string]*shardReplica{}
	for _, id := range []string{"r1", "r2", "r3"} {
		r := &shardReplica{id: id, logs: &lockedBuffer{}}
		r.cmd = exec.Command(bin, "controller", "--repo", remote.URL, "--branch", branch, "--path", fleetDir,
			"--kubeconfig-dir", kubeconfigs, "--cache-dir", t.TempDir(), "--interval", "1s", "--probe-interval", "1s",
			"--health-addr", "", "--http-addr", "", "--works-store", "git",
			"--hub-kubeconfig", hub.KubeconfigPath, "--controller-namespace", "propagit-system",
			"--shard", "--shard-identity", id, "--leader-elect-lease-duration", shardLease.String(),
			"--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms")
		r.cmd.Env = os.Environ()
		r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		replicas[id] = r
		t.Cleanup(func() {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			_ = r.cmd.Wait()
			if t.Failed() {
				t.Logf("replica %s log:\n%s", id, r.logs.String())
			}
		})
	}
	status := newStatusReader(t, remote)
	status.waitApplied(first, names...)

	// Each member is held by one live replica, the only one that applied.
	holder := func(cluster string) string {
		l, err := hub.Client().CoordinationV1().Leases("propagit-system").Get(ctx, shard.MemberKey(cluster), metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	appliers := func(cluster string, after time.Time) []string {
		var out []string
		for id, r := range replicas {
			for _, at := range r.applied()[cluster] {
				if at.After(after) {
					out = append(out, id)
					break
				}
			}
		}
		slices.Sort(out)
		return out
	}
	// Once the replicas have all joined, each member's Lease is held by
	// its rendezvous owner, and from then on only that replica applies
	// there. (While replicas join, a member is handed over from one to the
	// next: the first holder lets go before the next takes it.)
	live := []string{"r1", "r2", "r3"}
	owners := map[string]string{}
	eventually(t, converge, func() (bool, string) {
		for _, c := range names {
			owners[c] = holder(c)
			if want := shard.Owner(shard.MemberKey(c), live); owners[c] != want {
				return false, fmt.Sprintf("%s held by %q, want %s", c, owners[c], want)
			}
		}
		return true, ""
	})
	settled := time.Now()
	t.Logf("members by replica: %v", owners)
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML("default", "sharded", "v2")+"---\n"+configMapsPolicyYAML("default", names...))
	second := co.CommitPush("v2")
	status.waitApplied(second, names...)
	for _, c := range names {
		if got := appliers(c, settled); len(got) != 1 || got[0] != owners[c] {
			t.Errorf("%s: applied by %v since the replicas settled, Lease held by %q; want exactly the holder", c, got, owners[c])
		}
	}

	// Kill the replica holding the most members, as a node failure would.
	victim := ""
	for _, c := range names {
		if n := countHeld(owners, owners[c]); victim == "" || n > countHeld(owners, victim) {
			victim = owners[c]
		}
	}
	var orphaned []string
	for _, c := range names {
		if owners[c] == victim {
			orphaned = append(orphaned, c)
		}
	}
	killed := time.Now()
	if err := replicas[victim].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = replicas[victim].cmd.Wait()
	t.Logf("killed %s, which held %v", victim, orphaned)
	took := eventually(t, converge, func() (bool, string) {
		for _, c := range orphaned {
			if h := holder(c); h == "" || h == victim {
				return false, fmt.Sprintf("%s still held by %q", c, h)
			}
		}
		return true, ""
	})
	t.Logf("killed → every orphaned member held by a live replica in %s (lease duration %s)", took.Round(100*time.Millisecond), shardLease)
	// The killed replica's own Lease expires after one lease duration; the
	// survivors' electors then wait a full lease duration from when they
	// first saw each member's Lease (client-go's guard against clock skew).
	if limit := 2*shardLease + 3*time.Second; took > limit {
		t.Errorf("takeover took %s, more than twice the lease duration plus 3 s (%s)", took, limit)
	}

	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML("default", "sharded", "v3")+"---\n"+configMapsPolicyYAML("default", names...))
	third := co.CommitPush("v3")
	status.waitApplied(third, names...)
	for _, c := range names {
		got := appliers(c, killed)
		if len(got) != 1 || got[0] == victim || got[0] != holder(c) {
			t.Errorf("%s after the kill: applied by %v, held by %q; want exactly one live holder", c, got, holder(c))
		}
	}
	for _, m := range env.Members {
		if cm, err := getConfigMap(m, "default", "sharded"); err != nil || cm == nil || cm.Data["value"] != "v3" {
			t.Errorf("%s: ConfigMap default/sharded = %v (err %v), want v3", m.Name, cm, err)
		}
	}
}

func countHeld(owners map[string]string, id string) int {
	n := 0
	for _, o := range owners {
		if o == id {
			n++
		}
	}
	return n
}

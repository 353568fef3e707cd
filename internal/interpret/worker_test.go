package interpret

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAWorkerKilledWhileIdleDoesNotFailTheNextCall kills every idle
// worker from outside (as an OOM killer would) and asserts that the next
// call still succeeds: the request never reached the dead worker, so the
// script is not to blame.
func TestAWorkerKilledWhileIdleDoesNotFailTheNextCall(t *testing.T) {
	in := single(t, ReplicaResource, "function GetReplicas(obj) return obj.spec.replicas end")
	if _, _, _, err := in.InterpretReplica(thing()); err != nil {
		t.Fatal(err)
	}
	workers.mu.Lock()
	idle := append([]*worker(nil), workers.idle...)
	workers.mu.Unlock()
	if len(idle) == 0 {
		t.Fatal("no idle worker after a call")
	}
	for _, w := range idle {
		if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitZombie(t, w.cmd.Process.Pid)
	}
	for range idle {
		n, _, _, err := in.InterpretReplica(thing())
		if err != nil || n != 3 {
			t.Fatalf("after the idle worker died: replicas %d, error %v; want 3", n, err)
		}
	}
}

// waitZombie waits until pid has exited (a zombie until it is reaped).
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %d still running after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWorkersAreTheOOMKillersFirstChoice asserts that a worker process
// asks the kernel to be killed first when memory runs out, so that in a
// container a runaway script's worker dies instead of the controller.
func TestWorkersAreTheOOMKillersFirstChoice(t *testing.T) {
	in := single(t, ReplicaResource, "function GetReplicas(obj) return obj.spec.replicas end")
	if _, _, _, err := in.InterpretReplica(thing()); err != nil {
		t.Fatal(err)
	}
	workers.mu.Lock()
	idle := append([]*worker(nil), workers.idle...)
	workers.mu.Unlock()
	if len(idle) == 0 {
		t.Fatal("no idle worker after a call")
	}
	for _, w := range idle {
		adj, err := os.ReadFile("/proc/" + strconv.Itoa(w.cmd.Process.Pid) + "/oom_score_adj")
		if err != nil || strings.TrimSpace(string(adj)) != "1000" {
			t.Errorf("worker %d: oom_score_adj %q (%v), want 1000", w.cmd.Process.Pid, adj, err)
		}
	}
}

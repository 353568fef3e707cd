package soak

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
)

// proc is one propagit subprocess slot (a controller replica or the
// agent): it can be killed and started again with the same arguments,
// cache folder and log file, as a restarted pod would be.
type proc struct {
	name     string
	bin      string
	args     []string
	metrics  string // host:port of its /metrics
	logPath  string
	killable bool // false keeps one long-lived process for the resource slopes
	// restartOnExit starts it again when it exits on its own, as a
	// Deployment does for a leader that lost its Lease.
	restartOnExit bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	started time.Time
	starts  int
	down    bool // killed by the soak and not started again
}

// start runs the process unless it is running (the monitor may have
// restarted it first).
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return nil
		}
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own group, so a SIGKILL reaches its workers too; and killed with
	// the test binary, should that die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("failed to start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	p.cmd, p.done, p.started, p.down = cmd, done, time.Now(), false
	p.starts++
	return nil
}

// kill sends SIGKILL to the process group and waits for the exit; it
// reports whether the process was running.
func (p *proc) kill() bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.down = true
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return true
}

// pid returns the running process's id and when it started, or 0.
func (p *proc) pid() (int, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0, time.Time{}
	}
	select {
	case <-p.done:
		return 0, time.Time{}
	default:
		return p.cmd.Process.Pid, p.started
	}
}

// logTail returns the last n lines of the process's log.
func (p *proc) logTail(n int) string { return e2etest.FileTail(p.logPath, n) }

// leaseTimings are the sharded replicas' Lease timings, short so that
// takeovers happen within a soak of minutes.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// Modes: the replicas shard the push members with the Git store, or one
// leader does everything with the Work CR store on the hub.
const (
	modeShard  = "shard"
	modeLeader = "leader"
)

// leaderLease is the Lease of the leader-elected controller.
const leaderLease = "propagit-controller"

// replicaArgs are the flags of one controller replica in mode.
func replicaArgs(mode, id, repoURL, kcDir, hubKubeconfig, dir, metrics, hookToken string) []string {
	args := []string{"controller",
		"--repo", repoURL, "--branch", branch, "--path", fleetDir,
		"--kubeconfig-dir", kcDir, "--cache-dir", filepath.Join(dir, "cache"),
		"--interval", "1s", "--probe-interval", "1s",
		"--http-addr", metrics, "--health-addr", "", "--log-format", "json",
		"--hub-kubeconfig", hubKubeconfig, "--controller-namespace", hubNamespace,
		"--webhook-token-file", hookToken,
		"--leader-elect-lease-duration", leaseDuration.String(),
		"--leader-elect-renew-deadline", renewDeadline.String(),
		"--leader-elect-retry-period", retryPeriod.String(),
	}
	if mode == modeLeader {
		return append(args, "--works-store", "cr", "--leader-elect", "--leader-elect-lease-name", leaderLease)
	}
	return append(args, "--works-store", "git", "--shard", "--shard-identity", id)
}

// agentArgs are the flags of the pull member's agent; its cache folder is
// kept across restarts, so a restarted agent starts from a stale clone. In
// leader mode it reads its Work CR from the hub.
func agentArgs(mode, cluster, repoURL, kubeconfig, hubKubeconfig, dir, metrics string) []string {
	args := []string{"agent", "--cluster", cluster,
		"--kubeconfig", kubeconfig,
		"--cache-dir", filepath.Join(dir, "cache"),
		"--interval", "1s", "--heartbeat-interval", "5s",
		"--metrics-addr", metrics, "--log-format", "json",
	}
	if mode == modeLeader {
		return append(args, "--works-store", "cr", "--hub-kubeconfig", hubKubeconfig, "--controller-namespace", hubNamespace)
	}
	return append(args, "--repo", repoURL)
}

// isDown reports whether the soak killed the process and has not started
// it again.
func (p *proc) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// startCount is how many times the process was started.
func (p *proc) startCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one child binary running in its own process group, logging to a
// file. It is started once; a restart is a new process with the same command.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	cmd  *exec.Cmd
	done chan struct{} // closed once the child has been reaped
	err  error         // the result of Wait, valid after done is closed
}

// start launches the child. Output is appended to logPath so a restarted
// process continues the same log.
func (p *process) start() error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("failed to open log of %s: %w", p.name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	fmt.Fprintf(logFile, "=== testenv: starting %s %s\n", p.path, strings.Join(p.args, " "))

	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("failed to start %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.done = make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return nil
}

// pid returns the child's process id, or 0 if it was never started.
func (p *process) pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// running reports whether the child was started and has not exited.
func (p *process) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exitError describes how the child exited, for errors raised while waiting
// for it to become ready.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); log tail:\n%s", p.name, p.err, tailFile(p.logPath, 30))
}

// stop sends SIGTERM to the child's process group, escalates to SIGKILL after
// grace, and waits until the child is reaped. Stopping a process that is not
// running is a no-op.
func (p *process) stop(grace time.Duration) error {
	if !p.running() {
		return nil
	}
	pgid := p.pid() // Setpgid makes the child the leader of its own group
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to signal %s: %w", p.name, err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("failed to kill %s: %w", p.name, err)
		}
		<-p.done
	}
	// Reap anything else left in the group (none of our binaries fork, but a
	// group member surviving its leader would otherwise leak).
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to kill the process group of %s: %w", p.name, err)
	}
	return nil
}

// tailFile returns the last n lines of a file, reading at most its last 64 KiB.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const maxTail = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTail {
		if _, err := f.Seek(-maxTail, io.SeekEnd); err != nil {
			return fmt.Sprintf("(unreadable log: %v)", err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(unreadable log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnvVar makes TestHelperProcess start an Env in a child test binary.
const helperEnvVar = "PROPAGIT_TESTENV_HELPER"

// readyMarker prefixes the line the helper prints once its Env is ready.
const readyMarker = "TESTENV-READY"

// TestHelperProcess is not a test: run as a child by TestInterrupted, it
// starts one member, prints its root and process ids, and blocks until its
// stdin closes or a signal ends it.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnvVar) != "1" {
		t.Skip("helper for TestInterrupted")
	}
	e, err := New(Options{Members: 1})
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: %v\n", err)
		os.Exit(2)
	}
	pids := make([]string, 0)
	for _, pid := range e.StartedPIDs() {
		pids = append(pids, strconv.Itoa(pid))
	}
	fmt.Printf("%s %s %s\n", readyMarker, e.Dir(), strings.Join(pids, ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = e.Stop()
}

// TestInterrupted checks that an Env leaves nothing behind when its test
// binary is ended by SIGTERM (the handler New installs stops it) or by
// SIGKILL (the parent-death signal kills the children; the next New sweeps
// the folder).
func TestInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real members; skipped with -short")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, dir, pids := startHelper(t)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatalf("failed to signal the helper: %v", err)
			}
			err := cmd.Wait()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) {
				t.Fatalf("helper exit: got %v, want death by %s", err, sig)
			}
			ws := exitErr.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != sig {
				t.Fatalf("helper exit status %v, want death by %s", ws, sig)
			}
			if sig == syscall.SIGKILL {
				// The kernel delivers the parent-death signal as the helper
				// exits; give the children a moment to be reaped by init.
				waitFor(t, 30*time.Second, "children of the killed helper are gone", func() error {
					if left := processesNaming(dir); len(left) > 0 {
						return fmt.Errorf("still running: %v", left)
					}
					return nil
				})
				if _, err := os.Stat(dir); err != nil {
					t.Fatalf("folder of the killed helper: %v; want it left for the sweep", err)
				}
				sweepStaleDirs()
			}
			assertNoProcesses(t, dir, pids)
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("temporary root %s still exists (stat error: %v)", dir, err)
			}
		})
	}
}

// startHelper runs TestHelperProcess in a child test binary and returns once
// its Env is ready, with the Env's root and process ids.
func startHelper(t *testing.T) (*exec.Cmd, string, []int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnvVar+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("failed to start helper: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), readyMarker+" "); ok {
				ready <- line
			}
		}
		close(ready)
	}()
	select {
	case line, ok := <-ready:
		if !ok {
			t.Fatal("helper exited before its Env was ready")
		}
		dir, pids := parseReady(t, line)
		return cmd, dir, pids
	case <-time.After(startTimeout):
		t.Fatal("timed out waiting for the helper's Env")
	}
	return nil, "", nil
}

// parseReady parses "<root> <pid>,<pid>,…".
func parseReady(t *testing.T, line string) (string, []int) {
	t.Helper()
	dir, list, ok := strings.Cut(line, " ")
	if !ok || dir == "" {
		t.Fatalf("malformed ready line %q", line)
	}
	var pids []int
	for f := range strings.SplitSeq(list, ",") {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("malformed ready line %q: %v", line, err)
		}
		pids = append(pids, pid)
	}
	return dir, pids
}

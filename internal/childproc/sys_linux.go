package childproc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Attr kills a worker when the process that started it dies, so a
// crashed controller leaves nothing running.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// LimitAddressSpace sets the calling process's RLIMIT_AS to its current
// size plus headroom, and makes it the kernel's first choice when memory
// runs out (in a container the controller and its workers share one
// limit: a runaway worker is killed, never the controller). A worker
// calls it first thing; past the limit an allocation fails with "out of
// memory" in the worker instead of growing it toward the container's limit.
func LimitAddressSpace(headroom uint64) {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	size := vmSize()
	if size == 0 {
		return
	}
	lim := &syscall.Rlimit{Cur: size + headroom, Max: size + headroom}
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, lim)
}

// vmSize reads the process's mapped bytes from /proc (0 when unknown).
func vmSize() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

package interpret

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// workerAttr kills a worker when the process that started it dies, so a
// crashed controller leaves no script running.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// addressSpaceHeadroom is how much address space a worker may map beyond
// what it has when it starts: three times the default allocation budget,
// room for the budget, the collector's slack and the runtime's
// reservations. The watchdog samples allocation every millisecond, so a
// script that grows a string threefold per instruction can pass its
// budget by one step before it is stopped; the next step, or one Go call
// asking for gigabytes at once, fails with "out of memory" in the worker
// instead of growing it toward the container's limit.
const addressSpaceHeadroom = 768 << 20

// limitAddressSpace sets the worker's RLIMIT_AS to its current size plus
// addressSpaceHeadroom, and makes the worker the kernel's first choice
// when memory runs out (in a container, the controller and its workers
// share one limit: a runaway worker is killed, never the controller).
func limitAddressSpace() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	size := vmSize()
	if size == 0 {
		return
	}
	lim := &syscall.Rlimit{Cur: size + addressSpaceHeadroom, Max: size + addressSpaceHeadroom}
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

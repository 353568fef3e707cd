package cli

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// cgroupMemoryMax is the cgroup v2 memory limit of the process' container.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// memoryLimitShare is the part of the container's limit given to the Go
// heap; the rest covers stacks, cgo, page cache of the clone and slack.
const memoryLimitShare = 0.9

// setMemoryLimit makes the Go runtime collect harder as the controller
// nears its container's memory limit, instead of being killed by the OOM
// killer, unless GOMEMLIMIT already says otherwise.
func setMemoryLimit(log logr.Logger) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	if limit, ok := memoryLimit(cgroupMemoryMax); ok {
		debug.SetMemoryLimit(limit)
		log.V(1).Info("Go memory limit set from the cgroup", "bytes", limit)
	}
}

// memoryLimit reads a cgroup v2 memory.max file and returns the Go memory
// limit derived from it; false when there is no limit ("max") or no file.
func memoryLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int64(float64(n) * memoryLimitShare), true
}

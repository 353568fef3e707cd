package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUSeconds returns the user+system CPU seconds each process has used so
// far, by the names of pids. The suite and the benchmarks are CPU-bound on
// small machines, so what a member's processes burn is a figure worth
// reporting next to wall time. pid 0 stands for this process.
func CPUSeconds(pids map[string]int) (map[string]float64, error) {
	out := make(map[string]float64, len(pids))
	for name, pid := range pids {
		path := "/proc/self/stat"
		if pid != 0 {
			path = "/proc/" + strconv.Itoa(pid) + "/stat"
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the whole line.
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return nil, fmt.Errorf("%s: %d fields after the command, want at least 13", path, len(f))
		}
		u, err1 := strconv.ParseFloat(f[11], 64)
		k, err2 := strconv.ParseFloat(f[12], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: utime %q, stime %q", path, f[11], f[12])
		}
		out[name] = (u + k) / 100 // USER_HZ is 100 on Linux
	}
	return out, nil
}

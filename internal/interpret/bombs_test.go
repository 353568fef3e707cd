package interpret

import (
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bombs are scripts a committer can write to exhaust the process that runs
// them: each allocates or loops inside Go code (where the instruction
// budget does not reach), or returns a value whose conversion does.
var bombs = []struct {
	name, src string
	// script is set when a plain script error (not a budget) is an
	// acceptable end.
	script bool
}{
	{name: "returned DAG of 2^60 leaves", src: "local t = {'leaf'}\nfor i = 1, 60 do t = {t, t} end\nreturn 1, t"},
	{name: "returned map DAG of 2^60 leaves", src: "local t = {v = 'leaf'}\nfor i = 1, 60 do t = {a = t, b = t} end\nreturn 1, t"},
	{name: "deep nesting", src: "local t = {}\nfor i = 1, 100000 do t = {t} end\nreturn 1, t", script: true},
	{name: "table.concat of a doubling table", src: "local t = {string.rep('x', 1048576)}\nfor i = 1, 40 do t = {table.concat(t), table.concat(t)} end\nreturn 1", script: true},
	{name: "table.concat of 4096 MiB strings", src: "local s, t = string.rep('x', 1048576), {}\nfor i = 1, 4096 do t[i] = s end\nlocal big = table.concat(t)\nreturn #big", script: true},
	{name: "string.format with huge widths", src: "local args = {}\nfor i = 1, 4000 do args[i] = 'x' end\nlocal s = string.format(string.rep('%999999s', 4000), unpack(args))\nreturn #s", script: true},
	{name: "string.format with huge precision", src: "local s = string.format('%.999999f', 1)\nreturn #s", script: true},
	{name: "gsub with an exploding replacement", src: "local big = string.rep('y', 1048576)\nlocal s = string.rep('a', 100000):gsub('', function() return big end)\nreturn #s", script: true},
	{name: "gsub replacement with captures", src: "local s = string.rep('a', 1000000):gsub('(a)', string.rep('%1', 10000))\nreturn #s", script: true},
	{name: "string.rep variants", src: "local s = string.rep('x', 1048576)\nlocal t = s:rep(1, s)\nfor i = 1, 40 do s = s:rep(2) end\nreturn #s", script: true},
	{name: "unpack with a huge range", src: "return select('#', unpack({}, 1, 1e8))", script: true},
	{name: "string.byte of a whole big string", src: "local s = string.rep('x', 1048576)\nreturn select('#', s:byte(1, -1))", script: true},
	{name: "backtracking pattern", src: "return string.rep('a', 5000):find(('.-'):rep(8) .. 'b') or 0"},
	{name: "backtracking gmatch", src: "local n = 0\nfor m in string.rep('a', 5000):gmatch(('.-'):rep(8) .. 'b') do n = n + 1 end\nreturn n"},
	{name: "tostring and concat of big values", src: "local s = string.rep('z', 1048576)\nwhile true do s = tostring(s) .. tostring(s) .. s end"},
	{name: "sorting a huge table", src: "local t = {}\nfor i = 1, 3000000 do t[i] = -i end\ntable.sort(t)\nreturn 1"},
	{name: "recursion bomb", src: "local function f(n) return f(n + 1) + 1 end\nreturn f(1)", script: true},
	{name: "infinite loop", src: "while true do end"},
	{name: "coroutine", src: "local co = coroutine.create(function() while true do end end)\ncoroutine.resume(co)\nreturn 1", script: true},
}

// TestScriptBombsStopWithinBounds runs every bomb as a GetReplicas script
// under the default limits and asserts that the call ends with an *Error
// naming the customization and file (a budget error, or a script error
// where that is a fair end) within stopBound, that this process's heap
// stays within heapBound of where it started, and that nothing keeps
// working after the call returns: the goroutine count comes back, and a
// worker process stopped for its budget is gone.
func TestScriptBombsStopWithinBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each script runs to its budget; skipped with -short")
	}
	const heapBound = 64 << 20
	// The slack covers starting a worker process on a machine with both
	// cores busy; a bomb that is not stopped runs for minutes.
	stopBound := DefaultLimits().HardTimeout + 15*time.Second
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			src := "function GetReplicas(obj)\n" + b.src + "\nend"
			in := singleWith(t, DefaultLimits(), ReplicaResource, src)
			retired := watchRetired(t)
			goroutines := runtime.NumGoroutine()
			stopSampling := sampleHeap()
			start := time.Now()
			_, _, _, err := in.InterpretReplica(thing())
			took := time.Since(start)
			grew := stopSampling()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v, want an *Error", err)
			}
			if !e.Budget && !b.script {
				t.Errorf("error = %v, want a budget error", err)
			}
			if !strings.Contains(e.Error(), `ResourceInterpreterCustomization.config.karmada.io/thing replicaResource (ric.yaml:`) {
				t.Errorf("error = %q, want it to name the customization and file", e)
			}
			if took > stopBound {
				t.Errorf("took %s to stop, want at most %s", took, stopBound)
			}
			if grew > heapBound {
				t.Errorf("heap grew by %d MiB during the call, want at most %d MiB", grew>>20, heapBound>>20)
			}
			waitGoroutines(t, goroutines)
			if e.Budget {
				retired.assertGone(t)
			}
			t.Logf("%s after %s, heap +%d MiB, worker peak RSS %d MiB", e.Message, took.Round(time.Millisecond), grew>>20, retired.peakRSS()>>20)
		})
	}
}

// sampleHeap samples this process's live heap every millisecond until the
// returned function is called, which reports the peak growth over the
// heap at the start.
func sampleHeap() func() uint64 {
	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// waitGoroutines waits up to a second for the goroutine count to come
// back to n: a call that left work running behind it never does.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines still running after the call (had %d before):\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// retired records the worker processes stopped during one test.
type retired struct {
	mu     sync.Mutex
	states []*os.ProcessState
}

// watchRetired records the workers stopped until the test ends.
func watchRetired(t *testing.T) *retired {
	r := &retired{}
	retireHook = func(ps *os.ProcessState) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.states = append(r.states, ps)
	}
	t.Cleanup(func() { retireHook = nil })
	return r
}

// assertGone asserts that a worker was stopped and that its process no
// longer exists: whatever the script was doing has ended.
func (r *retired) assertGone(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.states) == 0 {
		t.Fatal("no worker process was stopped for the budget error")
	}
	for _, ps := range r.states {
		if err := syscall.Kill(ps.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d still exists after the call (kill -0: %v)", ps.Pid(), err)
		}
	}
}

// peakRSS is the largest resident size of a stopped worker.
func (r *retired) peakRSS() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var peak int64
	for _, ps := range r.states {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > peak {
			peak = ru.Maxrss << 10
		}
	}
	return peak
}

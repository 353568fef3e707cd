package interpret

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Limits bound one script call.
type Limits struct {
	// Instructions is the most Lua VM instructions a call may run.
	Instructions int64
	// Allocation is the most bytes a call may allocate. It is measured
	// for the whole worker process, which runs one call at a time.
	Allocation uint64
	// Timeout is the wall-clock time a call may take (Karmada: 1s). A
	// call still running at HardTimeout is abandoned and its worker
	// exits; one that has not answered a second later is killed.
	Timeout, HardTimeout time.Duration
	// CallStack and Registry size the Lua call stack and value stack; deeper
	// recursion fails with "stack overflow".
	CallStack, Registry int
}

// DefaultLimits are ample for the scripts Karmada ships and users write
// (a few thousand instructions each), and stop a runaway one within a
// second and a few hundred MiB.
func DefaultLimits() Limits {
	return Limits{
		Instructions: 10_000_000,
		Allocation:   256 << 20,
		Timeout:      time.Second,
		HardTimeout:  2 * time.Second,
		CallStack:    200,
		Registry:     64 << 10,
	}
}

// budget is the context a Lua state runs under. gopher-lua selects on
// Done before every VM instruction, which makes Done the instruction
// counter; the watchdog sets exceeded when time or allocation runs out.
type budget struct {
	context.Context
	left     int64
	exceeded atomic.Pointer[string]
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (b *budget) Done() <-chan struct{} {
	if b.exceeded.Load() != nil {
		return closed
	}
	if b.left--; b.left < 0 {
		b.stop("instruction budget exceeded")
		return closed
	}
	return nil // a nil channel never fires: the VM goes on
}

func (b *budget) Err() error {
	if msg := b.exceeded.Load(); msg != nil {
		return fmt.Errorf("%s", *msg)
	}
	return nil
}

// stop records the first reason the call must end.
func (b *budget) stop(reason string) {
	b.exceeded.CompareAndSwap(nil, &reason)
}

// allocated reads the bytes the process has allocated so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchInterval is how often time and allocation are checked.
const watchInterval = time.Millisecond

// run calls fn in a fresh sandboxed state on its own goroutine and waits,
// watching the budget. fn must do all its work with the state (build
// arguments, call, read results) before it returns.
func (s *Script) run(lim Limits, fn func(L *lua.LState) error) error {
	b := &budget{Context: context.Background(), left: lim.Instructions}
	done := make(chan error, 1)
	start := allocated()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- s.errorf(0, "script panicked: %v", r)
			}
		}()
		L := newState(lim)
		defer L.Close()
		L.SetContext(b)
		done <- fn(L)
	}()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	soft := time.NewTimer(lim.Timeout)
	defer soft.Stop()
	hard := time.NewTimer(lim.HardTimeout)
	defer hard.Stop()
	for {
		select {
		case err := <-done:
			if reason := b.exceeded.Load(); reason != nil {
				return s.classed(ClassBudget, 0, "stopped: %s", *reason)
			}
			return err
		case <-tick.C:
			if used := allocated() - start; used > lim.Allocation {
				b.stop(fmt.Sprintf("allocation budget of %d MiB exceeded", lim.Allocation>>20))
			}
		case <-soft.C:
			b.stop(fmt.Sprintf("timeout of %s exceeded", lim.Timeout))
		case <-hard.C:
			b.stop(fmt.Sprintf("timeout of %s exceeded", lim.Timeout))
			return s.classed(ClassBudget, 0, "stopped: did not return within %s (abandoned)", lim.HardTimeout)
		}
	}
}

// disabled are the base functions Karmada's interpreter replaces with an
// error: loaders, environment and metatable access, the collector.
var disabled = []string{"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile",
	"loadstring", "rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy", "_printregs"}

// newState opens the libraries Karmada exposes and nothing else.
func newState(lim Limits) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: lim.CallStack,
		RegistrySize: 1024, RegistryMaxSize: lim.Registry})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range disabled {
		L.SetGlobal(name, L.NewFunction(unsupported(name)))
	}
	L.SetGlobal("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	kube := L.SetFuncs(L.NewTable(), kubeFuncs)
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		if name := L.CheckString(1); name != "kube" {
			L.RaiseError("module %q not found: only \"kube\" can be required", name)
		}
		L.Push(kube)
		return 1
	}))
	boundStrings(L)
	return L
}

func unsupported(name string) lua.LGFunction {
	return func(L *lua.LState) int {
		L.RaiseError("call function %s is not supported in a resource interpreter customization", name)
		return 0
	}
}

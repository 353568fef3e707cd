package interpret

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/propagit/propagit/internal/childproc"
)

// maxResponse bounds what a worker may send back for one call: results
// are objects, far smaller.
const maxResponse = 16 << 20

// killGrace is how long past its hard timeout a worker gets to answer
// before it is killed.
const killGrace = time.Second

// worker is one child process serving script calls over two pipes.
type worker struct {
	cmd  *exec.Cmd
	req  io.WriteCloser
	resp io.ReadCloser
	// stderr is read only once the worker has ended, so that no
	// goroutine serves an idle worker; a worker prints little there (its
	// traceback is off), less than a pipe holds.
	stderr *os.File
	died   string
}

// pool keeps idle workers and bounds how many run at once.
type pool struct {
	mu   sync.Mutex
	idle []*worker
	slot chan struct{}
}

// workers serves every Interpreter of the process.
var workers = &pool{slot: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}

// retireHook, when set (by tests), is told of every worker process that
// was stopped and reaped.
var retireHook func(*os.ProcessState)

// do sends req to an idle worker (starting one if none is idle) and
// returns its response. A worker that broke, overran its time or was
// stopped for its budget is killed and reaped before do returns.
func (p *pool) do(s *Script, req *request) (*response, error) {
	p.slot <- struct{}{}
	defer func() { <-p.slot }()
	w, reused, err := p.take()
	if err != nil {
		return nil, s.errorf(0, "cannot start a script worker: %v", err)
	}
	resp, failure := w.call(req)
	if reused && diedIdle(w, failure) {
		// An idle worker that died (killed from outside) never ran the
		// request: the script is not to blame, a fresh worker runs it.
		w.stop()
		if w, err = startWorker(); err != nil {
			return nil, s.errorf(0, "cannot start a script worker: %v", err)
		}
		resp, failure = w.call(req)
	}
	if failure != nil || (resp.Err != nil && resp.Err.Budget) {
		w.stop()
		if failure != nil {
			return nil, s.workerError(w, failure)
		}
		return resp, nil
	}
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
	return resp, nil
}

// diedIdle reports whether a reused worker's call failed the way a worker
// that died while idle fails it: the request not sent, or not a byte of an
// answer (the pipe may take a request its dead reader never sees). A worker
// that overran its time or answered too much was running the script; one
// that crashed on a reused worker's first byte runs once more on a fresh
// worker and then fails as itself.
func diedIdle(w *worker, failure error) bool {
	if failure == nil || errors.Is(failure, errWorkerOverran) || errors.Is(failure, errFrameTooLarge) {
		return false
	}
	if errors.Is(failure, errNotSent) {
		return true
	}
	return errors.Is(failure, io.EOF) // not a byte of an answer
}

// take returns an idle worker (reused) or a new one.
func (p *pool) take() (w *worker, reused bool, err error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, true, nil
	}
	p.mu.Unlock()
	w, err = startWorker()
	return w, false, err
}

// startWorker re-executes this program as a worker: its code runs from
// this package's init, so the same binary (propagit, or a test binary)
// serves the calls.
func startWorker() (*worker, error) {
	exe, err := os.Executable()
	if runtime.GOOS == "linux" {
		exe, err = "/proc/self/exe", nil // survives the binary being replaced
	}
	if err != nil {
		return nil, err
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(reqR, reqW, respR, respW)
		return nil, err
	}
	w := &worker{req: reqW, resp: respR, stderr: errR}
	w.cmd = exec.Command(exe)
	w.cmd.Env = []string{workerEnv + "=1", "GOMAXPROCS=2", "GOTRACEBACK=none"}
	w.cmd.ExtraFiles = []*os.File{reqR, respW}
	w.cmd.Stderr = errW
	w.cmd.SysProcAttr = childproc.Attr()
	err = w.cmd.Start()
	closeAll(reqR, respW, errW)
	if err != nil {
		closeAll(reqW, respR, errR)
		return nil, err
	}
	return w, nil
}

// call sends one request and waits for its response, at most the call's
// hard timeout plus killGrace.
func (w *worker) call(req *request) (*response, error) {
	type answer struct {
		resp *response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := w.exchange(req)
		got <- answer{resp, err}
	}()
	timer := time.NewTimer(req.Limits.HardTimeout + killGrace)
	defer timer.Stop()
	select {
	case a := <-got:
		return a.resp, a.err
	case <-timer.C:
		w.stop() // ends exchange: its pipes close
		<-got
		return nil, errWorkerOverran
	}
}

var (
	errWorkerOverran = errors.New("overran its time")
	errNotSent       = errors.New("request not sent")
)

func (w *worker) exchange(req *request) (*response, error) {
	if err := writeFrame(w.req, req); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotSent, err)
	}
	data, err := readFrame(w.resp, maxResponse)
	if err != nil {
		return nil, err
	}
	resp := &response{}
	if err := json.Unmarshal(data, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// stop kills the worker (if it has not ended) and reaps it.
func (w *worker) stop() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Kill()
	w.req.Close()
	w.resp.Close()
	_ = w.cmd.Wait()
	tail, _ := io.ReadAll(io.LimitReader(w.stderr, 4096))
	w.stderr.Close()
	w.died = string(tail)
	if retireHook != nil {
		retireHook(w.cmd.ProcessState)
	}
}

// workerError explains a worker that ended a call without answering.
func (s *Script) workerError(w *worker, failure error) *Error {
	reason := "the script's process failed"
	switch {
	case errors.Is(failure, errWorkerOverran):
		reason = "did not return within the hard timeout (its process was killed)"
	case errors.Is(failure, errFrameTooLarge):
		reason = fmt.Sprintf("result larger than %d MiB", maxResponse>>20)
	case strings.Contains(w.died, "out of memory"):
		reason = "allocation budget exceeded (the script's process ran out of memory)"
	case strings.Contains(w.died, "stack overflow"):
		reason = "stack budget exceeded (the script's process overflowed its stack)"
	}
	return s.classed(ClassBudget, 0, "stopped: %s", reason)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

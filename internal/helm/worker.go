package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/propagit/propagit/internal/childproc"
)

// workerEnv is set in a render worker's environment; the worker's code
// runs from this package's init, before main or TestMain, in any binary
// that links it (propagit, or a test binary).
const workerEnv = "PROPAGIT_HELM_WORKER"

func init() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	os.Exit(serveWorker(os.Stdin, os.Stdout))
}

type workerRequest struct {
	Files   map[string][]byte `json:"files"`
	Release Release           `json:"release"`
	Limits  Limits            `json:"limits"`
}

type workerResponse struct {
	Output *Output `json:"output,omitempty"`
	Error  *Error  `json:"error,omitempty"`
}

// serveWorker renders requests read from in, one frame each, until in
// closes: a worker serves several renders, so a fleet's charts do not
// pay a process start each. The first request's limits bound the
// process's address space for good; memory is handed back between
// renders.
func serveWorker(in io.Reader, out io.Writer) int {
	limited := false
	for {
		data, err := readFrame(in, 1<<31)
		if err == io.EOF {
			return 0
		}
		if err != nil {
			return 4
		}
		var req workerRequest
		if err := json.Unmarshal(data, &req); err != nil {
			return 4
		}
		data = nil
		if !limited {
			childproc.LimitAddressSpace(req.Limits.MaxMemory)
			limited = true
		}
		var resp workerResponse
		o, err := Render(context.Background(), &Chart{Files: req.Files}, req.Release, req.Limits)
		switch e := err.(type) {
		case nil:
			resp.Output = o
		case *Error:
			resp.Error = e
		default:
			resp.Error = &Error{Message: err.Error()}
		}
		answer, err := json.Marshal(&resp)
		if err != nil || writeFrame(out, answer) != nil {
			return 4
		}
		req, resp, answer = workerRequest{}, workerResponse{}, nil
		debug.FreeOSMemory()
	}
}

// readFrame reads one length-prefixed frame of at most max bytes.
func readFrame(r io.Reader, max uint64) ([]byte, error) {
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint64(n[:])
	if size > max {
		return nil, errFrameTooLarge
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	return data, nil
}

func writeFrame(w io.Writer, data []byte) error {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(data)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

var errFrameTooLarge = errors.New("answer too large")

// Renderer renders charts in worker processes, a few at a time, and
// remembers what it rendered: the same chart, release and capabilities
// render once per Renderer (a fleet's clusters mostly share them).
// Safe for concurrent use.
type Renderer struct {
	Limits Limits
	slots  chan struct{}
	mu     sync.Mutex
	done   map[string]*rendered
}

type rendered struct {
	once sync.Once
	out  *Output
	err  error
}

// NewRenderer returns a Renderer with lim.
func NewRenderer(lim Limits) *Renderer {
	return &Renderer{Limits: lim, slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0))), done: map[string]*rendered{}}
}

// maxRemembered bounds the renders a Renderer keeps.
const maxRemembered = 1024

// Render renders c for rel in a worker process, or returns what an
// earlier identical call returned. The Output is shared: read only.
func (r *Renderer) Render(c *Chart, rel Release) (*Output, error) {
	key, err := renderKey(c, rel)
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: err.Error()}
	}
	r.mu.Lock()
	e := r.done[key]
	if e == nil {
		if len(r.done) >= maxRemembered {
			clear(r.done)
		}
		e = &rendered{}
		r.done[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		r.slots <- struct{}{}
		defer func() { <-r.slots }()
		e.out, e.err = r.inWorker(c, rel)
	})
	return e.out, e.err
}

func renderKey(c *Chart, rel Release) (string, error) {
	data, err := json.Marshal(rel)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(c.Digest))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// killGrace is how long past its timeout a worker gets before it is killed.
const killGrace = 500 * time.Millisecond

func (r *Renderer) inWorker(c *Chart, rel Release) (*Output, error) {
	lim := r.Limits
	req, err := json.Marshal(workerRequest{Files: c.Files, Release: rel, Limits: lim})
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: err.Error()}
	}
	w, err := workers.take(lim.MaxMemory)
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: "cannot start a render worker: " + err.Error()}
	}
	maxAnswer := uint64(2*lim.MaxOutput + 1<<20) // objects as JSON are about the size of their YAML
	data, timedOut, err := w.call(req, maxAnswer, lim.Timeout+killGrace)
	if err != nil && !timedOut && w.served > 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)) && w.stderr.buf.Len() == 0 {
		// An idle worker that died (killed from outside) never rendered
		// this chart: a fresh one does.
		w.stop()
		if w, err = startWorker(); err != nil {
			return nil, &Error{Chart: c.Name, Message: "cannot start a render worker: " + err.Error()}
		}
		data, timedOut, err = w.call(req, maxAnswer, lim.Timeout+killGrace)
	}
	if err != nil {
		w.stop()
		switch {
		case timedOut:
			return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render did not finish within %s (stopped)", lim.Timeout)}
		case errors.Is(err, errFrameTooLarge):
			return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render's output is over %d bytes (stopped)", maxAnswer)}
		case strings.Contains(w.stderr.buf.String(), "out of memory") || strings.Contains(w.stderr.buf.String(), "cannot allocate memory"):
			return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render used more than %d MiB of memory (stopped)", lim.MaxMemory>>20)}
		}
		return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render's worker failed: %v", err)}
	}
	workers.put(lim.MaxMemory, w)
	var resp workerResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, &Error{Chart: c.Name, Message: "the render's worker answered nonsense: " + err.Error()}
	}
	if resp.Error != nil {
		if resp.Error.Chart == "" {
			resp.Error.Chart = c.Name
		}
		return nil, resp.Error
	}
	if resp.Output == nil {
		resp.Output = &Output{}
	}
	return resp.Output, nil
}

// workerPool keeps idle render workers, by the address space they are
// bounded to. A worker serves at most maxServed renders; one that failed,
// overran or answered too much is killed, never reused.
type workerPool struct {
	mu   sync.Mutex
	idle map[uint64][]*worker
}

var workers = &workerPool{idle: map[uint64][]*worker{}}

// maxIdle and maxServed bound what idle workers hold.
const (
	maxIdle   = 2
	maxServed = 64
)

type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *limitedBuffer
	served int
}

func (p *workerPool) take(mem uint64) (*worker, error) {
	p.mu.Lock()
	if n := len(p.idle[mem]); n > 0 {
		w := p.idle[mem][n-1]
		p.idle[mem] = p.idle[mem][:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	return startWorker()
}

func (p *workerPool) put(mem uint64, w *worker) {
	w.served++
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.served >= maxServed || len(p.idle[mem]) >= maxIdle {
		go w.stop()
		return
	}
	p.idle[mem] = append(p.idle[mem], w)
}

// startWorker re-executes this program as a render worker.
func startWorker() (*worker, error) {
	exe, err := os.Executable()
	if runtime.GOOS == "linux" {
		exe, err = "/proc/self/exe", nil // survives the binary being replaced
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{workerEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.SysProcAttr = childproc.Attr()
	w := &worker{cmd: cmd, stderr: &limitedBuffer{buf: &bytes.Buffer{}, max: 4096}}
	cmd.Stderr = w.stderr
	if w.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if w.out, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return w, nil
}

// call sends one request and reads its answer within timeout; timedOut
// says the worker was killed for it.
func (w *worker) call(req []byte, maxAnswer uint64, timeout time.Duration) (data []byte, timedOut bool, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err = writeFrame(w.in, req); err != nil {
			return
		}
		data, err = readFrame(w.out, maxAnswer)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return data, false, err
	case <-timer.C:
		_ = w.cmd.Process.Kill()
		<-done
		return nil, true, errors.New("timed out")
	}
}

// stop kills the worker (a no-op if it ended) and reaps it.
func (w *worker) stop() {
	_ = w.cmd.Process.Kill()
	w.in.Close()
	_ = w.cmd.Wait()
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

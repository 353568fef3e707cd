package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// serveWorker renders one request read from in and writes the answer to out.
func serveWorker(in io.Reader, out io.Writer) int {
	var req workerRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return 4
	}
	childproc.LimitAddressSpace(req.Limits.MaxMemory)
	c := &Chart{Files: req.Files}
	var resp workerResponse
	o, err := Render(context.Background(), c, req.Release, req.Limits)
	switch e := err.(type) {
	case nil:
		resp.Output = o
	case *Error:
		resp.Error = e
	default:
		resp.Error = &Error{Message: err.Error()}
	}
	if err := json.NewEncoder(out).Encode(&resp); err != nil {
		return 4
	}
	return 0
}

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
	exe, err := os.Executable()
	if runtime.GOOS == "linux" {
		exe, err = "/proc/self/exe", nil // survives the binary being replaced
	}
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout+killGrace)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{workerEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.SysProcAttr = childproc.Attr()
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return nil, &Error{Chart: c.Name, Message: "cannot start a render worker: " + err.Error()}
	}
	maxAnswer := 2*lim.MaxOutput + 1<<20 // objects as JSON are about the size of their YAML
	data, readErr := io.ReadAll(io.LimitReader(stdout, maxAnswer+1))
	if int64(len(data)) > maxAnswer {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render did not finish within %s (stopped)", lim.Timeout)}
	case int64(len(data)) > maxAnswer:
		return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render's output is over %d bytes (stopped)", maxAnswer)}
	case strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "cannot allocate memory"):
		return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render used more than %d MiB of memory (stopped)", lim.MaxMemory>>20)}
	case readErr != nil || waitErr != nil:
		return nil, &Error{Chart: c.Name, Message: fmt.Sprintf("the render's worker failed: %v", errors.Join(readErr, waitErr))}
	}
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

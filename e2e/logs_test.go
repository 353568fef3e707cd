package e2e

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// parallelTests is how many tests marked parallel run at once unless
// -parallel says otherwise: they mostly wait on members and controllers,
// and testenv bounds how many members start at once in the process.
const parallelTests = "3"

func TestMain(m *testing.M) {
	// controller-runtime complains with a stack trace after 30 s when no
	// logger is set; the controller's own logs go to logRecorder.
	ctrllog.SetLogger(logr.Discard())
	e2etest.ExitIfShort()
	if !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", parallelTests)
	}
	code := m.Run()
	if err := shared.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "failed to stop the shared members: %v\n", err)
		code = max(code, 1)
	}
	if binaryDir != "" {
		os.RemoveAll(binaryDir) // the propagit binary the tests built (100 MiB)
	}
	os.Exit(code)
}

// shared are the members the tests that do not break members share (see
// e2etest.Pool): three plain apiservers instead of one or more per test.
var shared = e2etest.NewPool(testenv.Options{Members: 3})

// sharedMembers returns n members of the pool, n ≤ 3.
func sharedMembers(t *testing.T, n int) []*testenv.Member { return shared.Members(t, n) }

// flagSet reports whether the command line set the flag.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// logRecorder keeps every line the controller logs, for assertions, and
// echoes it to the test log until the controller has stopped.
type logRecorder struct {
	t      testing.TB
	mu     sync.Mutex
	lines  []string
	closed bool
}

func newLogRecorder(t testing.TB) *logRecorder { return &logRecorder{t: t} }

// logger returns a logr.Logger writing to r.
func (r *logRecorder) logger() logr.Logger { return logr.New(&recordSink{rec: r}) }

// close stops the echo to the test log; lines are still recorded.
func (r *logRecorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
}

// all returns a copy of the recorded lines.
func (r *logRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// find returns the first recorded line containing every one of subs.
func (r *logRecorder) find(subs ...string) (string, bool) { return r.findFrom(0, subs...) }

// findFrom is find among the lines recorded after the first from.
func (r *logRecorder) findFrom(from int, subs ...string) (string, bool) {
	for _, l := range r.all()[from:] {
		if containsAll(l, subs...) {
			return l, true
		}
	}
	return "", false
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func (r *logRecorder) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if !r.closed {
		r.t.Log(time.Now().Format("15:04:05.000") + " controller: " + line)
	}
}

// recordSink is a logr.LogSink formatting each entry on one line:
// LEVEL name: message key=value … error="…".
type recordSink struct {
	rec  *logRecorder
	name string
	kv   []any
}

var _ logr.LogSink = (*recordSink)(nil)

func (s *recordSink) Init(logr.RuntimeInfo) {}

func (s *recordSink) Enabled(level int) bool { return level <= 1 }

func (s *recordSink) Info(level int, msg string, kv ...any) {
	s.rec.add(s.format(fmt.Sprintf("INFO(%d)", level), msg, nil, kv))
}

func (s *recordSink) Error(err error, msg string, kv ...any) {
	s.rec.add(s.format("ERROR", msg, err, kv))
}

func (s *recordSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.kv = append(slices.Clone(s.kv), kv...)
	return &c
}

func (s *recordSink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

func (s *recordSink) format(level, msg string, err error, kv []any) string {
	var b strings.Builder
	b.WriteString(level)
	if s.name != "" {
		b.WriteString(" " + s.name + ":")
	}
	b.WriteString(" " + msg)
	all := append(slices.Clone(s.kv), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	if err != nil {
		fmt.Fprintf(&b, " error=%q", err.Error())
	}
	return b.String()
}

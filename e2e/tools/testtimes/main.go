// Command testtimes reads `go test -json` on stdin and prints what a plain
// `go test` would (a line per package, the output of each failed test)
// followed by the slowest tests, so a CI log shows where the time goes.
// It exits 1 when any test or package failed, or the stream ended before a
// package reported its result (a crash or a timeout).
//
//	go test -json ./... | go run ./e2e/tools/testtimes -top 25
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of test2json output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// key names one test (Test empty for the package itself).
type key struct{ pkg, test string }

// result is the time and outcome of a finished test.
type result struct {
	key
	elapsed time.Duration
	action  string
}

// report accumulates the stream.
type report struct {
	out      io.Writer
	output   map[key]*strings.Builder // buffered until the test ends
	finished []result
	open     map[string]bool // packages without a result yet
	failed   bool
}

func main() {
	top := flag.Int("top", 25, "how many of the slowest tests to list")
	flag.Parse()
	r := &report{out: os.Stdout, output: map[key]*strings.Builder{}, open: map[string]bool{}}
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(2)
	}
	r.summary(*top)
	if r.failed {
		os.Exit(1)
	}
}

// read consumes the stream; a line that is not JSON (a build error) is
// printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(r.out, sc.Text())
			continue
		}
		r.add(e)
	}
	return sc.Err()
}

// add handles one event.
func (r *report) add(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "start":
		r.open[e.Package] = true
	case "output":
		b := r.output[k]
		if b == nil {
			b = &strings.Builder{}
			r.output[k] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		r.finish(k, e)
	}
}

// finish records a test's or a package's result and prints what go test
// would: a failed test's output, a package's result line.
func (r *report) finish(k key, e event) {
	elapsed := time.Duration(e.Elapsed * float64(time.Second))
	out := r.output[k]
	delete(r.output, k)
	if e.Action == "fail" {
		r.failed = true
		if out != nil {
			fmt.Fprint(r.out, out.String())
		}
	}
	if k.test != "" {
		r.finished = append(r.finished, result{k, elapsed, e.Action})
		return
	}
	delete(r.open, k.pkg)
	switch {
	case e.Action == "fail":
		fmt.Fprintf(r.out, "FAIL\t%s\t%.1fs\n", k.pkg, e.Elapsed)
	case out != nil && strings.Contains(out.String(), "[no test files]"):
	default:
		fmt.Fprintf(r.out, "ok  \t%s\t%.1fs\n", k.pkg, e.Elapsed)
	}
}

// summary lists the slowest tests and any package that never finished.
func (r *report) summary(top int) {
	for pkg := range r.open {
		r.failed = true
		fmt.Fprintf(r.out, "FAIL\t%s\t(no result: the test binary crashed or was killed)\n", pkg)
		if out := r.output[key{pkg, ""}]; out != nil {
			fmt.Fprint(r.out, out.String())
		}
	}
	tests := slices.DeleteFunc(slices.Clone(r.finished), func(x result) bool { return strings.Contains(x.test, "/") })
	slices.SortFunc(tests, func(a, b result) int { return int(b.elapsed - a.elapsed) })
	if len(tests) == 0 {
		return
	}
	var total time.Duration
	for _, x := range tests {
		total += x.elapsed
	}
	fmt.Fprintf(r.out, "\nslowest tests (of %d top-level tests, %s in all):\n", len(tests), total.Round(time.Second))
	for _, x := range tests[:min(top, len(tests))] {
		fmt.Fprintf(r.out, "%8.1fs  %-4s  %s  %s\n", x.elapsed.Seconds(), x.action, x.test, x.pkg)
	}
}

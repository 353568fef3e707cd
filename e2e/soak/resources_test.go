package soak

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Resource bounds: an incarnation of a process is judged on its samples
// after warmUp, once they span at least judgeAfter; it fails on clear
// growth only, above these slopes per minute. A 2 m soak never judges.
const (
	warmUp        = 30 * time.Second
	judgeAfter    = 3 * time.Minute
	maxRSSSlope   = 16.0 // MiB per minute
	maxGoSlope    = 30.0 // goroutines per minute
	maxConnsSlope = 10.0 // open sockets per minute
)

// sample is one measurement of a process.
type sample struct {
	at                     time.Time
	rssMiB, gor, sockets   float64
	haveGoroutines, haveFD bool
}

// series are the samples of one incarnation (one start) of a process.
type series struct {
	proc    string
	start   int
	began   time.Time
	samples []sample
	judged  bool
}

// measure samples the running process of p, or reports why not.
func measure(p *proc) (sample, int, time.Time, error) {
	pid, began := p.pid()
	if pid == 0 {
		return sample{}, 0, began, fmt.Errorf("%s is not running", p.name)
	}
	s := sample{at: time.Now()}
	rss, err := vmRSS(pid)
	if err != nil {
		return sample{}, 0, began, err
	}
	s.rssMiB = rss
	if n, err := sockets(pid); err == nil {
		s.sockets, s.haveFD = float64(n), true
	}
	if g, err := goroutines(p.metrics); err == nil {
		s.gor, s.haveGoroutines = g, true
	}
	return s, pid, began, nil
}

// vmRSS reads VmRSS of pid in MiB.
func vmRSS(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// sockets counts the open sockets of pid: its connections and listeners.
func sockets(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, nil
}

// goroutines scrapes go_goroutines from the /metrics at addr.
func goroutines(addr string) (float64, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	return 0, fmt.Errorf("no go_goroutines at %s", addr)
}

// slope is the least-squares slope of value over time, per minute, of the
// samples after warmUp, and the minutes they span.
func (s *series) slope(value func(sample) (float64, bool)) (perMin, span float64, ok bool) {
	var xs, ys []float64
	for _, smp := range s.samples {
		v, have := value(smp)
		if !have || smp.at.Sub(s.began) < warmUp {
			continue
		}
		xs = append(xs, smp.at.Sub(s.began).Minutes())
		ys = append(ys, v)
	}
	if len(xs) < 3 {
		return 0, 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0, 0, false
	}
	return num / den, xs[len(xs)-1] - xs[0], true
}

func rssOf(s sample) (float64, bool)     { return s.rssMiB, true }
func goOf(s sample) (float64, bool)      { return s.gor, s.haveGoroutines }
func socketsOf(s sample) (float64, bool) { return s.sockets, s.haveFD }

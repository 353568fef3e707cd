package soak

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// eventLog is the soak's timeline: faults, commits, what the checker saw
// and every violation. Everything goes to a file; the last events are
// kept in memory to show around a violation.
type eventLog struct {
	start time.Time

	mu     sync.Mutex
	recent []string
	file   *os.File
}

// keepRecent is how many events a violation report shows.
const keepRecent = 30

func newEventLog(path string) (*eventLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &eventLog{start: time.Now(), file: f}, nil
}

// add records one event of kind (fault, commit, seen, …).
func (l *eventLog) add(kind, format string, args ...any) {
	line := fmt.Sprintf("%8.3fs %-9s %s", time.Since(l.start).Seconds(), kind, fmt.Sprintf(format, args...))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent = append(l.recent, line)
	if len(l.recent) > 4*keepRecent {
		l.recent = append([]string(nil), l.recent[len(l.recent)-keepRecent:]...)
	}
	if l.file != nil {
		fmt.Fprintln(l.file, line)
	}
}

// tail returns the last keepRecent events, one a line.
func (l *eventLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.recent
	if len(r) > keepRecent {
		r = r[len(r)-keepRecent:]
	}
	return strings.Join(r, "\n")
}

func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file != nil {
		l.file.Close()
		l.file = nil
	}
}

package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// overlapWindow is the one-writer bound: a replica writing to a member
// both less than this before and after another replica's write there was
// writing while the other did. A real handover cannot be that quick: the
// new holder waits a lease duration after the old holder's last renewal,
// and the old one stops acting a renew deadline after it, so at least
// leaseDuration - renewDeadline (1 s) passes between their writes; and a
// member goes back to a replica only after another full handover.
const overlapWindow = leaseDuration - renewDeadline

// auditWrite is one successful write in a member's audit log.
type auditWrite struct {
	id   string
	user string
	at   time.Time
	what string
}

// auditEvent is the part of a Kubernetes audit event the soak reads.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// auditLog follows one member's audit log as the apiserver appends to it
// (a restarted apiserver appends too).
type auditLog struct {
	member string
	path   string
	offset int64
	rest   []byte
	writes []auditWrite
	users  map[string]int
}

// scan reads what was appended since the last scan and keeps the
// successful writes of users.
func (a *auditLog) scan(users map[string]bool) error {
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	a.offset += int64(len(data))
	data = append(a.rest, data...)
	last := bytes.LastIndexByte(data, '\n')
	a.rest = append([]byte(nil), data[last+1:]...)
	for _, line := range bytes.Split(data[:last+1], []byte("\n")) {
		var e auditEvent
		if len(line) == 0 || json.Unmarshal(line, &e) != nil || e.Stage != "ResponseComplete" {
			continue
		}
		if !users[e.User.Username] || e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		what := e.Verb
		if r := e.ObjectRef; r != nil {
			what += " " + r.Resource + " " + r.Namespace + "/" + r.Name
		}
		a.writes = append(a.writes, auditWrite{id: e.AuditID, user: e.User.Username, at: e.RequestReceived, what: what})
		a.users[e.User.Username]++
	}
	return nil
}

// overlap is a write by one replica between two writes of another less
// than overlapWindow apart.
type overlap struct {
	before, middle, after auditWrite
}

func (o overlap) String() string {
	return fmt.Sprintf("%s wrote at %s (%s) and %s (%s), %s apart, and %s wrote between them at %s (%s)",
		o.before.user, o.before.at.Format("15:04:05.000000"), o.before.what,
		o.after.at.Format("15:04:05.000000"), o.after.what, o.after.at.Sub(o.before.at),
		o.middle.user, o.middle.at.Format("15:04:05.000000"), o.middle.what)
}

// handovers sorts the writes by arrival and returns the writer changes,
// the shortest gap between one writer's last write and the next writer's
// first, and every overlap.
func (a *auditLog) handovers() (switches int, minGap time.Duration, overlaps []overlap) {
	w := a.writes
	sort.SliceStable(w, func(i, j int) bool { return w[i].at.Before(w[j].at) })
	minGap = -1
	for i := 1; i < len(w); i++ {
		if w[i].user == w[i-1].user {
			continue
		}
		switches++
		if gap := w[i].at.Sub(w[i-1].at); minGap < 0 || gap < minGap {
			minGap = gap
		}
		// w[i-1] ends a run of one writer; the run of w[i].user ends
		// where a write by someone else comes; is that the first writer
		// again, within the window?
		j := i
		for j < len(w) && w[j].user == w[i].user {
			j++
		}
		if j < len(w) && w[j].user == w[i-1].user && w[j].at.Sub(w[i-1].at) < overlapWindow {
			overlaps = append(overlaps, overlap{before: w[i-1], middle: w[i], after: w[j]})
		}
	}
	return switches, minGap, overlaps
}

package dashboard

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/status"
)

// Event kinds on the events page.
const (
	EventDrift         = "Drift"
	EventFailover      = "Failover"
	EventRenderError   = "RenderError"
	EventPruneHeld     = "PruneHeld"
	EventScheduleError = "ScheduleError"
	EventNotReady      = "NotReady"
	EventWorkNotReady  = "WorkNotReady"
	// EventPlaced and EventRemoved are a template's object entering or
	// leaving a member's Work between two refreshes: with evictions they
	// tell a failover's story (not Ready, evicted, placed elsewhere, old
	// copy removed).
	EventPlaced  = "Placed"
	EventRemoved = "Removed"
)

// maxEvents bounds the events kept in memory.
const maxEvents = 5000

// Event is one thing that happened, read from the records.
type Event struct {
	Time time.Time
	// Observed: the record carries no time, so Time is when the dashboard
	// first saw it.
	Observed bool
	Kind     string
	Cluster  string
	Object   string
	Message  string
	// key identifies an event without a time of its own across refreshes.
	key string
}

// timedEvents are the events whose records carry their time: drift
// corrections, evictions (on objs, the Work's decoded manifests) and the
// Work's Ready condition turning away from True.
func timedEvents(in status.Input, objs []*unstructured.Unstructured) []Event {
	cluster := in.Work.Spec.Cluster
	var out []Event
	if in.Status != nil {
		for _, d := range in.Status.Drift {
			msg := string(d.Action)
			switch {
			case d.Deleted:
				msg += ": deleted on the member"
			case len(d.Fields) > 0:
				msg += ": " + strings.Join(d.Fields, ", ")
			}
			if d.Manager != "" {
				msg += " (by " + d.Manager + ")"
			}
			out = append(out, Event{Time: d.Time.Time, Kind: EventDrift, Cluster: cluster, Object: d.ObjectKey.String(), Message: msg})
		}
		if c := meta.FindStatusCondition(in.Status.Conditions, workv1alpha1.ConditionReady); c != nil && c.Status != "True" {
			out = append(out, Event{Time: c.LastTransitionTime.Time, Kind: EventWorkNotReady, Cluster: cluster,
				Message: "Ready " + string(c.Status) + " (" + c.Reason + "): " + c.Message})
		}
	}
	for _, obj := range objs {
		evictedAt := annotation(obj, workv1alpha1.AnnotationEvictedAt)
		if evictedAt == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, evictedAt)
		if err != nil {
			continue // not written by propagit: not an eviction it made
		}
		msg := "evicted: " + annotation(obj, workv1alpha1.AnnotationEvictedReason)
		if until := annotation(obj, workv1alpha1.AnnotationEvictedUntil); until != "" {
			msg += "; the old copy stays until " + until
		}
		out = append(out, Event{Time: at, Kind: EventFailover, Cluster: cluster, Object: workv1alpha1.KeyOf(obj).String(), Message: msg})
	}
	return out
}

// untimedEvents are the events whose records carry no time: the member
// not Ready as last rendered, render errors and held prunes.
func untimedEvents(in status.Input) []Event {
	cluster := in.Work.Spec.Cluster
	var out []Event
	add := func(kind, msg string) {
		out = append(out, Event{Observed: true, Kind: kind, Cluster: cluster, Message: msg,
			key: kind + "\x00" + cluster + "\x00" + msg})
	}
	if r := in.Work.Annotations[workv1alpha1.AnnotationClusterReady]; r != "" && r != "True" {
		msg := "cluster Ready " + r
		if t := in.Work.Annotations[workv1alpha1.AnnotationClusterTaints]; t != "" {
			msg += ", taints " + t
		}
		add(EventNotReady, msg)
	}
	for _, line := range strings.Split(in.Work.Annotations[workv1alpha1.AnnotationRenderErrors], "\n") {
		if line != "" {
			add(EventRenderError, line)
		}
	}
	if held := in.Work.Annotations[workv1alpha1.AnnotationPruneHeld]; held != "" {
		add(EventPruneHeld, held)
	}
	return out
}

// moves compares the placements of two snapshots: a template's object new
// on a member is placed there, one gone is removed (and pruned from the
// member by its applier). at is when the newer snapshot was read.
func moves(old, cur *templateIndex, at time.Time) []Event {
	on := func(ix *templateIndex, name string) map[string]bool {
		m := map[string]bool{}
		for _, p := range ix.by[name] {
			m[p.Cluster] = true
		}
		return m
	}
	var out []Event
	for _, row := range cur.rows {
		was := on(old, row.Name)
		for _, c := range row.Members {
			if !was[c] {
				out = append(out, Event{Time: at, Observed: true, Kind: EventPlaced, Cluster: c, Object: row.Name, Message: "placed on " + c})
			}
		}
	}
	for _, row := range old.rows {
		now := on(cur, row.Name)
		for _, c := range row.Members {
			if !now[c] {
				out = append(out, Event{Time: at, Observed: true, Kind: EventRemoved, Cluster: c, Object: row.Name,
					Message: "removed from the Work of " + c + ": its applier prunes it"})
			}
		}
	}
	return out
}

// record adds the events of snap, and the placement changes since the
// last snapshot, to the log, and drops the oldest beyond maxEvents. Called
// with s.mu held, after observe.
func (s *Server) record(snap *Snapshot, moved []Event) {
	add := func(e Event) {
		key := strings.Join([]string{e.Kind, e.Cluster, e.Object, e.Message, e.Time.UTC().Format(time.RFC3339Nano)}, "\x00")
		if _, ok := s.log[key]; !ok {
			e.key = key
			s.log[key] = e
		}
	}
	for _, e := range snap.templates().events {
		add(e)
	}
	for _, in := range snap.Inputs {
		for _, e := range untimedEvents(in) {
			e.Time = s.seen[e.key]
			add(e)
		}
	}
	for _, line := range snap.Report.ScheduleErrors {
		add(Event{Time: s.seen["schedule\x00"+line], Observed: true, Kind: EventScheduleError, Message: line})
	}
	for _, e := range moved {
		add(e)
	}
	if len(s.log) > maxEvents {
		for _, e := range sortEvents(slices.Collect(maps.Values(s.log)))[maxEvents:] {
			delete(s.log, e.key)
		}
	}
}

// sortEvents orders events newest first.
func sortEvents(out []Event) []Event {
	slices.SortStableFunc(out, func(a, b Event) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Object, b.Object),
			cmp.Compare(a.Message, b.Message))
	})
	return out
}

// Events returns the events seen since the start, newest first.
func (s *Server) Events() []Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortEvents(slices.Collect(maps.Values(s.log)))
}

type eventsBody struct {
	Rows  []Event
	Pager pager
	Kind  string
	Kinds []string
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	s.servePage(w, r, "events", "Events", func(snap *Snapshot) (any, int) {
		body := &eventsBody{Kind: r.URL.Query().Get("kind"),
			Kinds: []string{EventDrift, EventFailover, EventNotReady, EventWorkNotReady, EventPlaced, EventRemoved, EventRenderError,
				EventPruneHeld, EventScheduleError}}
		var rows []Event
		for _, e := range s.Events() {
			if body.Kind == "" || e.Kind == body.Kind {
				rows = append(rows, e)
			}
		}
		body.Pager = paginate(r, len(rows), s.opts.PageSize)
		body.Rows = rows[body.Pager.From:body.Pager.To]
		return body, http.StatusOK
	})
}

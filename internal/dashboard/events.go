package dashboard

import (
	"cmp"
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
)

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
		ann := obj.GetAnnotations()
		at, err := time.Parse(time.RFC3339, ann[workv1alpha1.AnnotationEvictedAt])
		if err != nil {
			continue
		}
		msg := "evicted: " + ann[workv1alpha1.AnnotationEvictedReason]
		if until := ann[workv1alpha1.AnnotationEvictedUntil]; until != "" {
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

// Events returns every event of the snapshot, newest first.
func (s *Server) Events(snap *Snapshot) []Event {
	out := slices.Clone(snap.templates().events)
	for _, in := range snap.Inputs {
		for _, e := range untimedEvents(in) {
			e.Time = s.firstSeen(e.key)
			out = append(out, e)
		}
	}
	for _, line := range snap.Report.ScheduleErrors {
		out = append(out, Event{Time: s.firstSeen("schedule\x00" + line), Observed: true, Kind: EventScheduleError, Message: line})
	}
	slices.SortStableFunc(out, func(a, b Event) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Object, b.Object))
	})
	return out
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
			Kinds: []string{EventDrift, EventFailover, EventNotReady, EventWorkNotReady, EventRenderError, EventPruneHeld, EventScheduleError}}
		var rows []Event
		for _, e := range s.Events(snap) {
			if body.Kind == "" || e.Kind == body.Kind {
				rows = append(rows, e)
			}
		}
		body.Pager = paginate(r, len(rows), s.opts.PageSize)
		body.Rows = rows[body.Pager.From:body.Pager.To]
		return body, http.StatusOK
	})
}

package dashboard

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/status"
)

// Placement is one template's object on one member.
type Placement struct {
	Template string
	Cluster  string
	Object   workv1alpha1.ObjectKey
	// Desired is the object's replicas (-1 for a non-workload); Ready
	// counts them when the object is healthy.
	Desired, Ready int64
	Health         workv1alpha1.Health
	Action         workv1alpha1.Action
	Message        string
	Drift          int
	// Frozen: the member's Work is suspended, so nothing reaches it.
	Frozen    bool
	Unclaimed bool
	Evicted   string
	obj       *unstructured.Unstructured
}

// TemplateRow is one template on the templates page.
type TemplateRow struct {
	Name           string
	Members        []string
	Desired, Ready int64
	Workload       bool
	Drift          int
	Frozen         int
	Unclaimed      bool
	Failed         int
}

// templateIndex maps each template to its placements, and holds the
// events read from the decoded manifests; built once per snapshot, as
// decoding every manifest is the costly part of a large fleet.
type templateIndex struct {
	rows   []TemplateRow
	by     map[string][]Placement
	events []Event
}

// lazyIndex builds a snapshot's template index on first use.
type lazyIndex struct {
	once sync.Once
	ix   *templateIndex
}

func (snap *Snapshot) templates() *templateIndex {
	snap.index.once.Do(func() { snap.index.ix = buildIndex(snap) })
	return snap.index.ix
}

func buildIndex(snap *Snapshot) *templateIndex {
	ix := &templateIndex{by: map[string][]Placement{}}
	for _, in := range snap.Inputs {
		objs := snap.objects[in.Work.Spec.Cluster]
		ix.events = append(ix.events, timedEvents(in, objs)...)
		for _, p := range placements(in, objs) {
			ix.by[p.Template] = append(ix.by[p.Template], p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ix.by)) {
		ix.rows = append(ix.rows, templateRow(name, ix.by[name]))
	}
	return ix
}

// placements are the objects of one member's Work that come from a
// template, each with its last result and drift.
func placements(in status.Input, objs []*unstructured.Unstructured) []Placement {
	results := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult{}
	drift := map[workv1alpha1.ObjectKey]int{}
	if in.Status != nil {
		for _, o := range in.Status.Objects {
			results[o.ObjectKey] = o
		}
		for _, d := range in.Status.Drift {
			drift[d.ObjectKey]++
		}
	}
	unclaimed := map[string]bool{}
	for _, t := range strings.Split(in.Work.Annotations[workv1alpha1.AnnotationUnclaimed], ",") {
		unclaimed[t] = t != ""
	}
	var out []Placement
	for _, obj := range objs {
		name := annotation(obj, workv1alpha1.AnnotationTemplate)
		if name == "" {
			continue
		}
		key := workv1alpha1.KeyOf(obj)
		res := results[key]
		p := Placement{Template: name, Cluster: in.Work.Spec.Cluster, Object: key, Desired: -1, Health: res.Health, Action: res.Action,
			Message: res.Message, Drift: drift[key], Frozen: in.Work.Spec.Suspended, Unclaimed: unclaimed[name],
			Evicted: annotation(obj, workv1alpha1.AnnotationEvictedReason), obj: obj}
		if scheduled := annotation(obj, workv1alpha1.AnnotationScheduledReplicas); scheduled != "" {
			// The final spec.replicas (after overrides) wins over what the
			// scheduler gave, as in status.
			p.Desired, _ = strconv.ParseInt(scheduled, 10, 64)
			if v, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
				p.Desired = v
			}
			if res.Health == workv1alpha1.HealthCurrent {
				p.Ready = p.Desired
			}
		}
		out = append(out, p)
	}
	return out
}

// templateRow sums a template's placements.
func templateRow(name string, ps []Placement) TemplateRow {
	row := TemplateRow{Name: name}
	for _, p := range ps {
		if !slices.Contains(row.Members, p.Cluster) {
			row.Members = append(row.Members, p.Cluster)
		}
		if p.Desired >= 0 {
			row.Workload = true
			row.Desired += p.Desired
			row.Ready += p.Ready
		}
		row.Drift += p.Drift
		row.Unclaimed = row.Unclaimed || p.Unclaimed
		if p.Frozen {
			row.Frozen++
		}
		if p.Action == workv1alpha1.ActionFailed {
			row.Failed++
		}
	}
	return row
}

type templatesBody struct {
	// Unschedulable lists the templates the scheduler could not place and
	// why: they have no member, so no row of their own.
	Unschedulable []string
	Rows          []TemplateRow
	Columns       []column
	Pager         pager
	Query         string
	Only          string
}

// ShowState says whether the State column has anything to show on this
// page: a column empty in every row is left out.
func (b *templatesBody) ShowState() bool {
	return slices.ContainsFunc(b.Rows, func(r TemplateRow) bool { return r.Unclaimed || r.Frozen > 0 || r.Failed > 0 })
}

func (s *Server) templates(w http.ResponseWriter, r *http.Request) {
	s.servePage(w, r, "templates", "Templates", func(snap *Snapshot) (any, int) {
		q := r.URL.Query()
		body := &templatesBody{Query: q.Get("q"), Only: q.Get("only"), Unschedulable: snap.Report.ScheduleErrors}
		var rows []TemplateRow
		for _, row := range snap.templates().rows {
			if body.Query != "" && !strings.Contains(row.Name, body.Query) {
				continue
			}
			switch body.Only {
			case "drift":
				if row.Drift == 0 {
					continue
				}
			case "unclaimed":
				if !row.Unclaimed {
					continue
				}
			case "frozen":
				if row.Frozen == 0 {
					continue
				}
			case "failed":
				if row.Failed == 0 {
					continue
				}
			}
			rows = append(rows, row)
		}
		sortTemplates(rows, q.Get("sort"), q.Get("order") == "desc")
		body.Pager = paginate(r, len(rows), s.opts.PageSize)
		body.Rows = rows[body.Pager.From:body.Pager.To]
		body.Columns = columns(r, "name", "Template", "members", "Members", "replicas", "Ready/desired", "drift", "Drift")
		return body, http.StatusOK
	})
}

func sortTemplates(rows []TemplateRow, key string, desc bool) {
	slices.SortStableFunc(rows, func(a, b TemplateRow) int {
		c := 0
		switch key {
		case "members":
			c = cmp.Compare(len(a.Members), len(b.Members))
		case "replicas":
			c = cmp.Compare(a.Desired-a.Ready, b.Desired-b.Ready)
		case "drift":
			c = cmp.Compare(a.Drift, b.Drift)
		}
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Name, b.Name))
	})
}

// annotation reads one annotation of obj without copying them all (a
// refresh reads several of each of a large fleet's objects).
func annotation(obj *unstructured.Unstructured, key string) string {
	v, _, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", key)
	return v
}

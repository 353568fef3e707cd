// Package status folds Work records and their per-cluster status into the
// reports people read: a cluster table, a template table, and a line per
// source revision that says how many clusters run it. "Merged" must never
// read as "running" when it is not, so a cluster counts as running a
// revision only when that revision is applied and every object is healthy.
package status

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Input is one Work with its status and how the cluster is delivered.
type Input struct {
	Work   *workv1alpha1.Work
	Status *workv1alpha1.WorkStatus
	// Mode is Push or Pull.
	Mode string
}

// Report is what `propagit status` prints.
type Report struct {
	// Revision is the newest source revision recorded in the Works.
	Revision  string        `json:"revision"`
	Summary   string        `json:"summary"`
	Clusters  []ClusterRow  `json:"clusters"`
	Templates []TemplateRow `json:"templates"`
	// Drift is the newest changes made on members outside propagit, newest
	// first, at most MaxDriftRows.
	Drift []DriftRow `json:"drift,omitempty"`
	// RenderErrors are the templates that failed to render, per cluster;
	// each keeps what its cluster ran.
	RenderErrors []RenderErrorRow `json:"renderErrors,omitempty"`
	// HelmHooks are the Helm hooks of the charts rendered for each
	// cluster, which propagit does not apply.
	HelmHooks []RenderErrorRow `json:"helmHooks,omitempty"`
	// Unclaimed are the templates no policy claims any more, with the
	// clusters where they keep running.
	Unclaimed []UnclaimedRow `json:"unclaimed,omitempty"`
	// ScheduleErrors are the templates the scheduler could not place, each
	// "Template: reason (placed nowhere | keeps its previous placement)".
	ScheduleErrors []string `json:"scheduleErrors,omitempty"`
	// RecorderHeartbeat is when the recording controller last read its
	// source and recorded (works.RecorderHeartbeats); nil when the store
	// keeps none.
	RecorderHeartbeat *time.Time `json:"recorderHeartbeat,omitempty"`
	// SourceRefused is the newest source revision when the recording
	// controller refused it (--verify-commits: its commits do not
	// verify), as it recorded with its heartbeat; nil when it did not.
	// Members keep Revision.
	SourceRefused *SourceRefusal `json:"sourceRefused,omitempty"`
	// Rollouts are where the RolloutPolicies' newest rollouts stand.
	Rollouts []RolloutRow `json:"rollouts,omitempty"`
}

// SourceRefusal is a source revision the controller refused.
type SourceRefusal struct {
	// Revision is the refused revision, full hash.
	Revision string `json:"revision"`
	// Reason says why: "commit 9a70926: not signed".
	Reason string `json:"reason"`
	// Since is when the controller first refused it.
	Since *time.Time `json:"since,omitempty"`
}

// Line is the report's line on the refusal: "source: revision 9a70926
// refused: commit 9a70926: not signed (since 2026-12-03T17:00:00Z);
// members keep 97f4f05".
func (s *SourceRefusal) Line(kept string) string {
	line := "source: revision " + workv1alpha1.ShortRevision(s.Revision) + " refused: " + s.Reason
	if s.Since != nil {
		line += " (since " + s.Since.UTC().Format(time.RFC3339) + ")"
	}
	if kept == "" {
		return line + "; nothing is recorded"
	}
	return line + "; members keep " + workv1alpha1.ShortRevision(kept)
}

// RenderErrorRow is one template that failed to render for one cluster.
type RenderErrorRow struct {
	Cluster string `json:"cluster"`
	// Error names the template, the policy, rule and field, and why.
	Error string `json:"error"`
}

// UnclaimedRow is one template that lost its policy.
type UnclaimedRow struct {
	Template string   `json:"template"`
	Clusters []string `json:"clusters"`
}

// MaxDriftRows bounds Report.Drift.
const MaxDriftRows = 10

// DriftRow is one change made on a member outside propagit.
type DriftRow struct {
	Cluster string `json:"cluster"`
	// Object is the changed object, spelled as every message spells it
	// (ObjectKey.Display).
	Object  string    `json:"object"`
	Fields  []string  `json:"fields,omitempty"`
	Manager string    `json:"manager,omitempty"`
	Deleted bool      `json:"deleted,omitempty"`
	Action  string    `json:"action"`
	Time    time.Time `json:"time"`
}

// ClusterRow is one member.
type ClusterRow struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
	// ClusterReady and Taints are the cluster as the controller last
	// rendered for it: its Ready condition and its taints (kubectl's
	// key[=value]:Effect), Git's and Karmada's readiness ones alike.
	ClusterReady string   `json:"clusterReady,omitempty"`
	Taints       []string `json:"taints,omitempty"`
	// Ready is the Work's Ready condition: applied and healthy; Reason
	// is the condition's reason (NoCredentials: nothing is applied until
	// someone gives the hub a credential).
	Ready           string     `json:"ready"`
	Reason          string     `json:"reason,omitempty"`
	WantRevision    string     `json:"wantRevision"`
	AppliedRevision string     `json:"appliedRevision,omitempty"`
	Objects         int        `json:"objects"`
	Healthy         int        `json:"healthy"`
	Failed          int        `json:"failed"`
	Drift           int        `json:"drift"`
	LastHeard       *time.Time `json:"lastHeard,omitempty"`
	AgentVersion    string     `json:"agentVersion,omitempty"`
	Message         string     `json:"message,omitempty"`
	// PruneHeld is why the member is held on an earlier revision by the
	// prune guard ("" when it is not).
	PruneHeld string `json:"pruneHeld,omitempty"`
	// KubernetesVersion, CPU and Memory (allocatable) are the member as
	// its pull agent, or the controller's probe of a push member, last
	// measured it.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	CPU               string `json:"cpu,omitempty"`
	Memory            string `json:"memory,omitempty"`
}

// TemplateRow is one template across clusters.
type TemplateRow struct {
	Template        string   `json:"template"`
	Clusters        []string `json:"clusters"`
	DesiredReplicas int64    `json:"desiredReplicas,omitempty"`
	ReadyReplicas   int64    `json:"readyReplicas,omitempty"`
	Workload        bool     `json:"workload"`
}

// Build folds the inputs into a Report, sorted by cluster and template.
// newest is the newest source revision the Work store recorded (a Work
// keeps the revision that last changed it, so the Works alone cannot tell
// which of their revisions is newest); "" falls back to the first Work's.
func Build(inputs []Input, newest string) (*Report, error) {
	r := &Report{Revision: newest}
	templates := map[string]*TemplateRow{}
	unclaimed := map[string][]string{}
	scheduling := map[string]bool{}
	running := 0
	for _, in := range inputs {
		row := clusterRow(in)
		if in.Work.Spec.SourceRevision > "" && r.Revision == "" {
			r.Revision = in.Work.Spec.SourceRevision
		}
		if row.Ready == "True" && row.AppliedRevision == row.WantRevision {
			running++
		}
		r.Clusters = append(r.Clusters, row)
		r.Drift = append(r.Drift, driftRows(in)...)
		r.RenderErrors = append(r.RenderErrors, renderErrorRows(in)...)
		r.HelmHooks = append(r.HelmHooks, annotationRows(in, workv1alpha1.AnnotationHelmHooks)...)
		addUnclaimed(unclaimed, in)
		addScheduleErrors(scheduling, in)
		if err := addTemplates(templates, in); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(r.Clusters, func(a, b ClusterRow) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range templates {
		slices.Sort(t.Clusters)
		r.Templates = append(r.Templates, *t)
	}
	slices.SortFunc(r.Templates, func(a, b TemplateRow) int { return strings.Compare(a.Template, b.Template) })
	r.ScheduleErrors = slices.Sorted(maps.Keys(scheduling))
	for _, name := range slices.Sorted(maps.Keys(unclaimed)) {
		r.Unclaimed = append(r.Unclaimed, UnclaimedRow{Template: name, Clusters: unclaimed[name]})
	}
	slices.SortStableFunc(r.Drift, func(a, b DriftRow) int { return b.Time.Compare(a.Time) })
	r.Drift = r.Drift[:min(len(r.Drift), MaxDriftRows)]
	r.Summary = fmt.Sprintf("%s: %d/%d clusters applied and healthy", workv1alpha1.DisplayRevision(r.Revision), running, len(inputs))
	if n := notReady(r.Clusters); n > 0 {
		r.Summary += fmt.Sprintf(", %d not ready", n)
	}
	return r, nil
}

func clusterRow(in Input) ClusterRow {
	st := in.Status
	if st == nil {
		st = &workv1alpha1.WorkStatus{}
	}
	row := ClusterRow{Name: in.Work.Spec.Cluster, Mode: in.Mode, Ready: "Unknown", WantRevision: in.Work.Spec.SourceRevision,
		AppliedRevision: st.AppliedRevision, Objects: len(in.Work.Spec.Manifests), Drift: len(st.Drift), AgentVersion: st.AgentVersion,
		ClusterReady: in.Work.Annotations[workv1alpha1.AnnotationClusterReady]}
	if taints := in.Work.Annotations[workv1alpha1.AnnotationClusterTaints]; taints != "" {
		row.Taints = strings.Split(taints, ",")
	}
	// Healthy counts the objects of this Work only: a member that has not
	// answered since its Work changed still reports the objects it ran.
	wanted := manifestRefs(in.Work)
	for _, o := range st.Objects {
		switch {
		case o.Action == workv1alpha1.ActionFailed:
			row.Failed++
		case o.Health == workv1alpha1.HealthCurrent && wanted[o.ObjectKey]:
			row.Healthy++
		}
	}
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady); c != nil {
		row.Ready, row.Reason, row.Message = string(c.Status), c.Reason, c.Message
		t := c.LastTransitionTime.Time
		row.LastHeard = &t
	}
	if st.Heartbeat != nil {
		t := st.Heartbeat.Time
		row.LastHeard = &t
	}
	if st.Message != "" {
		row.Message = st.Message // a source or format problem outranks the condition
	}
	if c := st.Cluster; c != nil {
		row.KubernetesVersion = c.KubernetesVersion
		if rs := c.ResourceSummary; rs != nil {
			if q, ok := rs.Allocatable[corev1.ResourceCPU]; ok {
				row.CPU = q.String()
			}
			if q, ok := rs.Allocatable[corev1.ResourceMemory]; ok {
				row.Memory = q.String()
			}
		}
	}
	if held := in.Work.Annotations[workv1alpha1.AnnotationPruneHeld]; held != "" {
		row.PruneHeld = held
		row.Message = "prune held: " + held // what the member waits for outranks how it runs
	}
	return row
}

// manifestRefs returns the keys of w's manifests; manifests that do not
// decode are left out.
func manifestRefs(w *workv1alpha1.Work) map[workv1alpha1.ObjectKey]bool {
	out := make(map[workv1alpha1.ObjectKey]bool, len(w.Spec.Manifests))
	for i := range w.Spec.Manifests {
		if obj, err := workv1alpha1.DecodeManifest(&w.Spec.Manifests[i]); err == nil {
			out[workv1alpha1.KeyOf(obj)] = true
		}
	}
	return out
}

func driftRows(in Input) []DriftRow {
	if in.Status == nil {
		return nil
	}
	var out []DriftRow
	for _, d := range in.Status.Drift {
		out = append(out, DriftRow{Cluster: in.Work.Spec.Cluster, Object: d.ObjectKey.Display(), Fields: d.Fields, Manager: d.Manager,
			Deleted: d.Deleted, Action: string(d.Action), Time: d.Time.Time})
	}
	return out
}

// renderErrorRows reads the render errors the controller recorded on a
// Work.
func renderErrorRows(in Input) []RenderErrorRow {
	return annotationRows(in, workv1alpha1.AnnotationRenderErrors)
}

// annotationRows reads the lines of a Work's annotation, one row each.
func annotationRows(in Input, annotation string) []RenderErrorRow {
	var out []RenderErrorRow
	for _, line := range strings.Split(in.Work.Annotations[annotation], "\n") {
		if line != "" {
			out = append(out, RenderErrorRow{Cluster: in.Work.Spec.Cluster, Error: line})
		}
	}
	return out
}

// addScheduleErrors adds the scheduling failures a Work records to set:
// every Work carries the same fleet-wide list, so it is read once whatever
// the number of Works.
func addScheduleErrors(set map[string]bool, in Input) {
	for _, line := range strings.Split(in.Work.Annotations[workv1alpha1.AnnotationScheduleErrors], "\n") {
		if line != "" {
			set[line] = true
		}
	}
}

// addUnclaimed adds the unclaimed templates a Work records to by, template
// → clusters (in input order, which is by cluster).
func addUnclaimed(by map[string][]string, in Input) {
	for _, t := range strings.Split(in.Work.Annotations[workv1alpha1.AnnotationUnclaimed], ",") {
		if t != "" {
			by[t] = append(by[t], in.Work.Spec.Cluster)
		}
	}
}

func addTemplates(rows map[string]*TemplateRow, in Input) error {
	health := map[workv1alpha1.ObjectKey]workv1alpha1.Health{}
	if in.Status != nil {
		for _, o := range in.Status.Objects {
			health[o.ObjectKey] = o.Health
		}
	}
	objs, err := workv1alpha1.Objects(in.Work)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		name := obj.GetAnnotations()[workv1alpha1.AnnotationTemplate]
		if name == "" {
			continue
		}
		row := rows[name]
		if row == nil {
			row = &TemplateRow{Template: name}
			rows[name] = row
		}
		if !slices.Contains(row.Clusters, in.Work.Spec.Cluster) {
			row.Clusters = append(row.Clusters, in.Work.Spec.Cluster)
		}
		if r, ok := obj.GetAnnotations()[workv1alpha1.AnnotationScheduledReplicas]; ok {
			n, _ := strconv.ParseInt(r, 10, 64)
			if v, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
				n = v
			}
			row.Workload = true
			row.DesiredReplicas += n
			if health[workv1alpha1.KeyOf(obj)] == workv1alpha1.HealthCurrent {
				row.ReadyReplicas += n
			}
		}
	}
	return nil
}

func notReady(rows []ClusterRow) int {
	n := 0
	for _, r := range rows {
		if r.Ready != "True" {
			n++
		}
	}
	return n
}

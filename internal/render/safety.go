package render

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
)

// What a commit can do to what a member runs (issue 13): a template that
// fails to render for a cluster keeps there what it last recorded; a
// template that loses its policy keeps its last placement and content
// (unclaimed); only a template removed from Git loses its objects, and
// even then not those whose policy preserved them or whose template says
// propagit.io/prune: disabled (orphans). The history is Input.Previous.

// RenderError is one (template, cluster) pair that failed to render: an
// override failed or its result is not an object Kubernetes accepts.
type RenderError struct {
	Template workv1alpha1.ObjectKey `json:"template"`
	// Source is where the template is declared.
	Source  load.Source `json:"source"`
	Cluster string      `json:"cluster"`
	// Policy is the failing override policy as messages name it
	// (load.Override.Display); "" when the rendered object is invalid.
	Policy       string      `json:"policy,omitempty"`
	PolicySource load.Source `json:"policySource,omitzero"`
	// Rule is the index in spec.overrideRules; Overrider locates the
	// failing overrider in the policy spec, for example
	// "overrideRules[0].overriders.plaintext".
	Rule      int    `json:"rule"`
	Overrider string `json:"overrider,omitempty"`
	// Path is the field of the object: for an override failure the path
	// the overrider works on as its policy writes it ("/spec/replicas";
	// "" when the policy does not say, Message then names it), for an
	// invalid object the invalid field ("metadata.labels").
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Kept is true when the cluster keeps the object last recorded for the
	// template (it is in Works, unchanged); false when nothing was
	// recorded, so the cluster gets nothing.
	Kept bool `json:"kept"`
}

// String renders "Template on cluster: Policy rule N overrider: message".
func (e RenderError) String() string {
	s := e.Template.Display() + " on " + e.Cluster + ": "
	if e.Policy != "" {
		s += e.Policy + " rule " + strconv.Itoa(e.Rule) + " " + e.Overrider + ": "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + e.Message
}

// detail is String without the template and cluster, which whoever shows a
// Target's Error names already.
func (e RenderError) detail() string {
	return strings.TrimPrefix(e.String(), e.Template.Display()+" on "+e.Cluster+": ")
}

// Unclaimed is a template in Git that no policy claims any more and that
// keeps, on each cluster listed, the objects last recorded there.
type Unclaimed struct {
	Template workv1alpha1.ObjectKey `json:"template"`
	Source   load.Source            `json:"source"`
	// Policy is the policy that claimed it last ("" for a dependency kept
	// with an unclaimed referrer).
	Policy   string   `json:"policy,omitempty"`
	Clusters []string `json:"clusters"`
}

// Why an orphan stays on its member.
const (
	// OrphanPreserved: its policy said preserveResourcesOnDeletion: true.
	OrphanPreserved = "preserveResourcesOnDeletion"
	// OrphanPruneDisabled: its template said propagit.io/prune: disabled.
	OrphanPruneDisabled = "prune disabled"
)

// Orphan is an object of a template removed from Git that stays on its
// member: the applier must remove propagit's labels and annotations from it
// (and its inventory) instead of deleting it.
type Orphan struct {
	Cluster  string                 `json:"cluster"`
	Template workv1alpha1.ObjectKey `json:"template"`
	// Object is the copy last recorded; its key is the object to release.
	Object *unstructured.Unstructured `json:"-"`
	// Reason is OrphanPreserved or OrphanPruneDisabled.
	Reason string `json:"reason"`
}

// OrphansOn returns the orphans of cluster.
func (r *Result) OrphansOn(cluster string) []Orphan {
	var out []Orphan
	for _, o := range r.Orphans {
		if o.Cluster == cluster {
			out = append(out, o)
		}
	}
	return out
}

// keepRecorded applies the history to the rendered bindings: failed pairs
// and unclaimed templates take their last recorded objects, and the
// objects of templates removed from Git are listed as orphans or left out
// (deleted). It fills r.Errors, r.Unclaimed and r.Orphans. unfailed, when
// not nil, marks the bindings known to have no failed target.
func keepRecorded(r *Result, prev *Previous, byKey *Index, unfailed []bool) {
	declared := map[string]bool{}
	for _, c := range r.Clusters {
		declared[c.Name] = true
	}
	unclaimed := false
	for i, b := range r.Bindings {
		if unfailed == nil || !unfailed[i] {
			keepFailed(r, b, prev.recorded(b.Key))
		}
		if isUnclaimed(b, prev) {
			keepUnclaimed(b, prev.recorded(b.Key), declared)
			unclaimed = true
		}
	}
	for _, b := range r.Bindings {
		if !unclaimed {
			break // a dependency is kept only beside an unclaimed referrer
		}
		keepUnclaimedDependencies(b, prev.recorded(b.Key), byKey, declared)
	}
	for _, b := range r.Bindings {
		if b.Unclaimed {
			r.Unclaimed = append(r.Unclaimed, unclaimedOf(b, prev))
		}
	}
	r.Orphans = orphans(prev, byKey)
}

// keepFailed gives every target of b that failed to render the object last
// recorded for it, and reports the failure.
func keepFailed(r *Result, b *Binding, recorded map[string]*unstructured.Unstructured) {
	for _, t := range b.Targets {
		if t.Failure == nil || t.Object != nil {
			continue
		}
		e := *t.Failure // the memo shares t.Failure between renders
		if old := recorded[t.Cluster]; old != nil {
			t.Object, t.Kept, e.Kept = old.DeepCopy(), true, true
		}
		r.Errors = append(r.Errors, e)
	}
}

// isUnclaimed reports whether b is a template in Git that ran under a
// policy and that no policy claims now.
func isUnclaimed(b *Binding, prev *Previous) bool {
	if b.Skipped != "" || b.Choice.Winner != nil || len(b.DependencyOf) > 0 || isNamespaceKey(b.Key, b.Template.Object) {
		return false
	}
	p := prev.lookup(b.Key)
	return p != nil && p.Claim != nil && len(prev.recorded(b.Key)) > 0
}

// keepUnclaimed places b, unclaimed, where it was recorded, with the
// objects recorded there (clusters no longer declared get nothing).
func keepUnclaimed(b *Binding, recorded map[string]*unstructured.Unstructured, declared map[string]bool) {
	b.Unclaimed = true
	for _, cluster := range sortedClusters(recorded) {
		if declared[cluster] {
			b.Targets = append(b.Targets, keptTarget(cluster, recorded[cluster]))
		}
	}
}

// keepUnclaimedDependencies keeps a dependency on each cluster where it was
// recorded as the dependency of a template that is now unclaimed and kept
// there: Karmada keeps the attached bindings with their referrer's.
func keepUnclaimedDependencies(dep *Binding, recorded map[string]*unstructured.Unstructured, byKey *Index, declared map[string]bool) {
	if dep.Skipped != "" {
		return
	}
	for _, cluster := range sortedClusters(recorded) {
		obj := recorded[cluster]
		if !declared[cluster] || slices.ContainsFunc(dep.Targets, func(t *Target) bool { return t.Cluster == cluster }) ||
			!keptReferrer(obj.GetAnnotations()[workv1alpha1.AnnotationDependencyOf], cluster, byKey) {
			continue
		}
		dep.Targets = append(slices.Clip(dep.Targets), keptTarget(cluster, obj)) // a copy: the targets may be shared
		slices.SortFunc(dep.Targets, func(x, y *Target) int { return strings.Compare(x.Cluster, y.Cluster) })
		if dep.Choice.Winner == nil {
			dep.Unclaimed = true
		}
	}
}

// keptReferrer reports whether one of the comma-separated referrers is
// unclaimed and kept on cluster.
func keptReferrer(referrers, cluster string, byKey *Index) bool {
	for name := range strings.SplitSeq(referrers, ",") {
		k, err := workv1alpha1.ParseKey(name)
		if r := byKey.get(k); err == nil && r != nil && r.Unclaimed &&
			slices.ContainsFunc(r.Targets, func(t *Target) bool { return t.Cluster == cluster }) {
			return true
		}
	}
	return false
}

func keptTarget(cluster string, obj *unstructured.Unstructured) *Target {
	t := &Target{Cluster: cluster, Scheduled: true, Kept: true, Object: obj.DeepCopy()}
	if n, err := strconv.Atoi(obj.GetAnnotations()[workv1alpha1.AnnotationScheduledReplicas]); err == nil {
		t.Replicas = int32(n)
	}
	return t
}

func unclaimedOf(b *Binding, prev *Previous) Unclaimed {
	u := Unclaimed{Template: b.Key, Source: b.Template.Source}
	if p := prev.lookup(b.Key); p != nil && p.Claim != nil {
		u.Policy = policyName(&PolicyRef{ClusterScoped: p.Claim.ClusterScoped, Namespace: p.Claim.Namespace, Name: p.Claim.Name})
	}
	for _, t := range b.Targets {
		u.Clusters = append(u.Clusters, t.Cluster)
	}
	return u
}

// orphans lists the recorded objects of templates no longer in Git that
// stay on their members.
func orphans(prev *Previous, byKey *Index) []Orphan {
	if prev == nil {
		return nil
	}
	var out []Orphan
	for key, recorded := range prev.Recorded {
		if byKey.get(key) != nil {
			continue
		}
		for cluster, obj := range recorded {
			if reason := orphanReason(obj); reason != "" {
				out = append(out, Orphan{Cluster: cluster, Template: key, Object: obj, Reason: reason})
			}
		}
	}
	slices.SortFunc(out, func(a, b Orphan) int {
		if c := strings.Compare(a.Cluster, b.Cluster); c != 0 {
			return c
		}
		return workv1alpha1.KeyOf(a.Object).Compare(workv1alpha1.KeyOf(b.Object))
	})
	return out
}

// orphanReason says why obj stays on its member once its template is
// removed, or "" when it is deleted.
func orphanReason(obj *unstructured.Unstructured) string {
	ann := obj.GetAnnotations()
	switch {
	case ann[workv1alpha1.AnnotationPreserveResourcesOnDeletion] == "true":
		return OrphanPreserved
	case ann[workv1alpha1.AnnotationPrune] == workv1alpha1.PruneDisabled:
		return OrphanPruneDisabled
	}
	return ""
}

func sortedClusters(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// overrideFailure describes an override error of b on cluster; overrides
// are the policies that were applied.
func overrideFailure(b *Binding, cluster string, overrides []load.Override, err error) *RenderError {
	e := &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Message: err.Error()}
	var re *override.RuleError
	if errors.As(err, &re) {
		e.Policy, e.PolicySource, e.Rule, e.Overrider, e.Message = re.Policy, re.Source, re.Rule, re.Field, re.Err.Error()
		e.Path = overriderPath(overrides, re)
	}
	return e
}

// invalidFailure describes a rendered object of b that is not valid.
func invalidFailure(b *Binding, cluster string, fe *fieldError) *RenderError {
	return &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Path: fe.path, Message: fe.msg}
}

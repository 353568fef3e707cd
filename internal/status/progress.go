package status

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// MinRevisionPrefix is the shortest revision prefix MatchRevision accepts,
// as Git hosts show it.
const MinRevisionPrefix = 7

// MatchRevision reports whether the full revision rev is named by want, a
// full revision or a prefix of at least MinRevisionPrefix characters.
func MatchRevision(rev, want string) bool {
	if rev == "" || len(want) < MinRevisionPrefix {
		return false
	}
	return strings.HasPrefix(strings.ToLower(rev), strings.ToLower(want))
}

// Target is what a pipeline waits for after a merge.
type Target struct {
	// Revision is a full source revision or a prefix of one.
	Revision string
	// Healthy also requires the Work's Ready condition True; otherwise
	// applied is enough.
	Healthy bool
}

// Progress is where one member stands on its way to a Target.
type Progress struct {
	Cluster string `json:"cluster"`
	// Reached is true when the member runs the target revision (applied,
	// and healthy when the target asks for it).
	Reached         bool   `json:"reached"`
	AppliedRevision string `json:"appliedRevision,omitempty"`
	// Ready is the Work's Ready condition status ("Unknown" when none).
	Ready string `json:"ready"`
	// Message says why the member has not reached the target, or what its
	// Ready condition says when it has.
	Message string `json:"message,omitempty"`
}

// Reached tells where the member of in stands on t, newest being the
// newest revision the Work store recorded. A Work keeps the revision that
// last changed it, so a member runs the target revision when the store's
// newest revision (or its own Work's) is the target and the member applied
// this Work's content (see appliedWork); a Work the prune guard holds on an
// earlier revision has not reached it.
func Reached(in Input, newest string, t Target) Progress {
	st := in.Status
	if st == nil {
		st = &workv1alpha1.WorkStatus{}
	}
	p := Progress{Cluster: in.Work.Spec.Cluster, AppliedRevision: st.AppliedRevision, Ready: "Unknown"}
	ready := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady)
	readyMsg := ""
	if ready != nil {
		p.Ready, readyMsg = string(ready.Status), ready.Message
	}
	if st.Message != "" {
		readyMsg = st.Message // a source or format problem outranks the condition, as in the report
	}
	switch {
	case !MatchRevision(newest, t.Revision) && !MatchRevision(in.Work.Spec.SourceRevision, t.Revision):
		p.Message = "the newest recorded revision is " + workv1alpha1.DisplayRevision(newest) + ", not " + workv1alpha1.DisplayRevision(t.Revision) + " (not rendered yet, or superseded)"
	case in.Work.Annotations[workv1alpha1.AnnotationRolloutHeld] != "":
		p.Message = "rollout: " + in.Work.Annotations[workv1alpha1.AnnotationRolloutHeld]
	case in.Work.Annotations[workv1alpha1.AnnotationPruneHeld] != "":
		p.Message = "prune held: " + in.Work.Annotations[workv1alpha1.AnnotationPruneHeld]
	case !appliedWork(in.Work, st, newest):
		p.Message = join("not applied yet", readyMsg)
	case t.Healthy && p.Ready != "True":
		p.Message = join("applied, not healthy", readyMsg)
	default:
		p.Reached, p.Message = true, readyMsg
	}
	return p
}

// appliedWork reports whether st says the member applied w's content: the
// same digest (a pull agent digests the Work it read), or, since the push
// controller applies the Work as rendered (same content, other bytes), the
// revision w records or the newest one, which rendered w's content too.
func appliedWork(w *workv1alpha1.Work, st *workv1alpha1.WorkStatus, newest string) bool {
	switch {
	case st.AppliedDigest != "" && st.AppliedDigest == workv1alpha1.Digest(w):
		return true
	case st.AppliedRevision == "":
		return false
	}
	return st.AppliedRevision == w.Spec.SourceRevision || st.AppliedRevision == newest
}

func join(head, detail string) string {
	if detail == "" {
		return head
	}
	return head + ": " + detail
}

// AllRunning reports whether every member runs the newest revision applied
// and healthy, the question `propagit status --exit-code` answers; false
// when there is no member at all.
func (r *Report) AllRunning() bool {
	for _, c := range r.Clusters {
		if c.Ready != "True" || c.AppliedRevision != c.WantRevision || c.PruneHeld != "" {
			return false
		}
	}
	return len(r.Clusters) > 0
}

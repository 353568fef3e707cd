package works

import (
	"bytes"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// StatusChanged reports whether next is a transition from prev: whether a
// store writes next. Both stores use this rule, so an applier may report as
// often as it likes and the store's write rate stays bounded by the rate of
// real changes.
//
// Two statuses are the same (no transition) when, after Normalize, they
// differ only in:
//
//   - Heartbeat. A heartbeat-only change is never written, with one
//     exception: when heartbeatInterval > 0 and next's heartbeat is at least
//     heartbeatInterval after prev's (or prev has none), it is written, so a
//     reader can still tell a live applier from a dead one while each
//     cluster writes at most once per heartbeatInterval in steady state.
//   - A condition's LastTransitionTime or ObservedGeneration, for the
//     Work's conditions and for those of the cluster state a pull agent
//     measured (its probe stamps every Ready condition with the probe
//     time). A condition changes only when it appears, disappears, or its
//     status, reason or message changes. Messages must therefore carry no
//     timestamps or durations.
//   - The order of conditions (by type), inventory, object results and
//     drift records, and nil versus empty lists.
//
// Everything else — the applied revision, agent version, message, each
// object's action, health and message, each drift record — is compared
// exactly, with times at the one-second precision they are stored with. A
// nil prev or next is the zero status.
func StatusChanged(prev, next *workv1alpha1.WorkStatus, heartbeatInterval time.Duration) bool {
	return NormalizedChanged(Normalize(prev), Normalize(next), heartbeatInterval)
}

// NormalizedChanged is StatusChanged of two normalized statuses, which it
// leaves as they are. The long lists, inventory and object results, are
// compared entry by entry without reflection: a member's thousands of
// entries are compared on every sync.
func NormalizedChanged(a, b *workv1alpha1.WorkStatus, heartbeatInterval time.Duration) bool {
	if heartbeatInterval > 0 && b.Heartbeat != nil &&
		(a.Heartbeat == nil || b.Heartbeat.Sub(a.Heartbeat.Time) >= heartbeatInterval) {
		return true
	}
	if !slices.Equal(a.Inventory, b.Inventory) || !slices.EqualFunc(a.Objects, b.Objects, SameResult) {
		return true
	}
	x, y := statusHead(a), statusHead(b)
	return !equality.Semantic.DeepEqual(x, y)
}

// statusHead returns a shallow copy of st without heartbeat, inventory and
// object results, its conditions (its own and its cluster state's) copied
// without what does not make a condition change.
func statusHead(st *workv1alpha1.WorkStatus) *workv1alpha1.WorkStatus {
	out := *st
	out.Heartbeat, out.Inventory, out.Objects = nil, nil, nil
	out.Conditions = slices.Clone(st.Conditions)
	clearTransitions(out.Conditions)
	if st.Cluster != nil {
		cl := *st.Cluster
		cl.Conditions = slices.Clone(cl.Conditions)
		clearTransitions(cl.Conditions)
		out.Cluster = &cl
	}
	return &out
}

// clearTransitions zeroes what does not make a condition change: its
// LastTransitionTime and ObservedGeneration.
func clearTransitions(conds []metav1.Condition) {
	for i := range conds {
		conds[i].LastTransitionTime = metav1.Time{}
		conds[i].ObservedGeneration = 0
	}
}

// Normalize returns a copy of st as stores write it: lists sorted, times
// truncated to seconds. A nil st gives the zero status.
func Normalize(st *workv1alpha1.WorkStatus) *workv1alpha1.WorkStatus {
	if st == nil {
		return &workv1alpha1.WorkStatus{}
	}
	out := st.DeepCopy()
	out.Heartbeat = truncate(out.Heartbeat)
	for i := range out.Conditions {
		out.Conditions[i].LastTransitionTime = *truncate(&out.Conditions[i].LastTransitionTime)
	}
	if out.Cluster != nil {
		for i := range out.Cluster.Conditions {
			out.Cluster.Conditions[i].LastTransitionTime = *truncate(&out.Cluster.Conditions[i].LastTransitionTime)
		}
	}
	for i := range out.Drift {
		out.Drift[i].Time = *truncate(&out.Drift[i].Time)
	}
	sort.SliceStable(out.Conditions, func(i, j int) bool { return out.Conditions[i].Type < out.Conditions[j].Type })
	// The long lists are usually sorted already: checking costs one pass,
	// sorting them again a stable sort of a member's thousands of entries
	// on every sync.
	if less := func(i, j int) bool { return RefLess(out.Inventory[i], out.Inventory[j]) }; !sort.SliceIsSorted(out.Inventory, less) {
		sort.SliceStable(out.Inventory, less)
	}
	if less := func(i, j int) bool { return RefLess(out.Objects[i].ObjectRef, out.Objects[j].ObjectRef) }; !sort.SliceIsSorted(out.Objects, less) {
		sort.SliceStable(out.Objects, less)
	}
	sort.SliceStable(out.Drift, func(i, j int) bool {
		a, b := out.Drift[i], out.Drift[j]
		if !a.Time.Equal(&b.Time) {
			return a.Time.Before(&b.Time)
		}
		return RefLess(a.ObjectRef, b.ObjectRef)
	})
	return out
}

// Settle returns the status a store writes when next replaces prev: next
// normalized, with each condition whose status did not change keeping
// prev's LastTransitionTime (the Kubernetes meaning of the field: when the
// status last changed, whatever the applier put there), and a missing
// transition time set to now.
func Settle(prev, next *workv1alpha1.WorkStatus, now time.Time) *workv1alpha1.WorkStatus {
	out := Normalize(next)
	var prevConds, prevCluster []metav1.Condition
	if prev != nil {
		prevConds = prev.Conditions
		if prev.Cluster != nil {
			prevCluster = prev.Cluster.Conditions
		}
	}
	settleConditions(prevConds, out.Conditions, now)
	if out.Cluster != nil {
		// The cluster state's conditions follow the same rule.
		settleConditions(prevCluster, out.Cluster.Conditions, now)
	}
	return out
}

// settleConditions gives each condition of next whose status did not
// change prev's LastTransitionTime, and a missing one now.
func settleConditions(prev, next []metav1.Condition, now time.Time) {
	old := map[string]metav1.Condition{}
	for _, c := range prev {
		old[c.Type] = c
	}
	for i := range next {
		c := &next[i]
		if p, ok := old[c.Type]; ok && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
			c.LastTransitionTime = *truncate(&p.LastTransitionTime)
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Time{Time: now.Truncate(time.Second)}
		}
	}
}

func truncate(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return &metav1.Time{Time: t.Truncate(time.Second)}
}

// RefLess orders object references by namespace, kind, group, name and
// version.
func RefLess(a, b workv1alpha1.ObjectRef) bool {
	x := [5]string{a.Namespace, a.Kind, a.Group, a.Name, a.Version}
	y := [5]string{b.Namespace, b.Kind, b.Group, b.Name, b.Version}
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

func SameResult(a, b workv1alpha1.ObjectResult) bool {
	if a.ObjectRef != b.ObjectRef || a.Action != b.Action || a.Health != b.Health || a.Message != b.Message {
		return false
	}
	switch {
	case a.Status == nil || b.Status == nil:
		return a.Status == b.Status
	case a.Status.Object == nil && b.Status.Object == nil:
		return bytes.Equal(a.Status.Raw, b.Status.Raw)
	}
	return equality.Semantic.DeepEqual(a.Status, b.Status)
}

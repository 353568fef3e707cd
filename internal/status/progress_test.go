package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestMatchRevision(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		want string
		ok   bool
	}{
		{rev, true},
		{"0123456", true},
		{"0123456789ABCDEF", true},
		{"012345", false}, // too short to name a revision
		{"1234567", false},
		{"", false},
	} {
		if got := MatchRevision(rev, tt.want); got != tt.ok {
			t.Errorf("MatchRevision(%q) = %v, want %v", tt.want, got, tt.ok)
		}
	}
	if MatchRevision("", "0123456") {
		t.Error("an empty revision must match nothing")
	}
}

// TestReached pins when a member counts as running a revision: the Work's
// content applied (a Work keeps the revision that last changed it), and
// Ready when the target asks for healthy.
func TestReached(t *testing.T) {
	const old, rev, next = "0ld0000000000000", "abc1234567890000", "def9876543210000"
	wk := func(source string, mod ...func(*workv1alpha1.Work)) *workv1alpha1.Work {
		w := work("m1", source, deployment(t, "web", 2, 2))
		for _, m := range mod {
			m(w)
		}
		return w
	}
	applied := func(w *workv1alpha1.Work, appliedRev string, ready metav1.ConditionStatus, msg string) *workv1alpha1.WorkStatus {
		return &workv1alpha1.WorkStatus{AppliedRevision: appliedRev, AppliedDigest: workv1alpha1.Digest(w),
			Conditions: []metav1.Condition{{Type: "Ready", Status: ready, Message: msg}}}
	}
	held := func(w *workv1alpha1.Work) {
		w.Annotations = map[string]string{workv1alpha1.AnnotationPruneHeld: "revision abc1234 would delete 3 of 4 objects"}
	}
	unchanged := wk(old)
	stale := work("m1", old, deployment(t, "web", 2, 3)) // other content than rev's
	heldWork := wk(old, held)
	for _, tt := range []struct {
		name   string
		in     Input
		newest string
		target Target
		want   Progress
	}{{
		name: "applied and healthy at the revision", in: Input{Work: wk(rev), Status: applied(wk(rev), rev, "True", "ok")},
		newest: rev, target: Target{Revision: "abc1234", Healthy: true},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: rev, Ready: "True", Message: "ok"},
	}, {
		name: "a Work the revision did not change counts once its content is applied",
		in:   Input{Work: unchanged, Status: applied(unchanged, old, "True", "ok")}, newest: rev, target: Target{Revision: rev, Healthy: true},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: old, Ready: "True", Message: "ok"},
	}, {
		name: "the revision is not recorded yet",
		in:   Input{Work: stale, Status: applied(stale, old, "True", "ok")}, newest: old, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", AppliedRevision: old, Ready: "True",
			Message: "the newest recorded revision is 0ld0000, not abc1234 (not rendered yet, or superseded)"},
	}, {
		name: "the member's own Work still carries a superseded revision",
		in:   Input{Work: wk(rev), Status: applied(wk(rev), rev, "True", "ok")}, newest: next, target: Target{Revision: rev, Healthy: true},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: rev, Ready: "True", Message: "ok"},
	}, {
		name:   "recorded, not applied: the Ready message says why",
		in:     Input{Work: wk(rev), Status: applied(stale, old, "False", "member not reachable: NoCredentials: no credentials")},
		newest: rev, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", AppliedRevision: old, Ready: "False", Message: "not applied yet: member not reachable: NoCredentials: no credentials"},
	}, {
		name:   "applied as rendered (other bytes, same revision): the revision tells",
		in:     Input{Work: wk(rev), Status: &workv1alpha1.WorkStatus{AppliedRevision: rev, AppliedDigest: "ffffffffffffffff", Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Message: "ok"}}}},
		newest: rev, target: Target{Revision: rev, Healthy: true},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: rev, Ready: "True", Message: "ok"},
	}, {
		name:   "back after missing the revision that changed its Work: applied at the newest",
		in:     Input{Work: wk(old), Status: &workv1alpha1.WorkStatus{AppliedRevision: rev, AppliedDigest: "ffffffffffffffff", Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Message: "ok"}}}},
		newest: rev, target: Target{Revision: rev, Healthy: true},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: rev, Ready: "True", Message: "ok"},
	}, {
		name:   "an apply that failed keeps an older revision: not applied",
		in:     Input{Work: wk(rev), Status: &workv1alpha1.WorkStatus{AppliedRevision: old, Conditions: []metav1.Condition{{Type: "Ready", Status: "False", Message: "apply failed"}}}},
		newest: rev, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", AppliedRevision: old, Ready: "False", Message: "not applied yet: apply failed"},
	}, {
		name: "no status at all", in: Input{Work: wk(rev)}, newest: rev, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", Ready: "Unknown", Message: "not applied yet"},
	}, {
		name: "applied is enough for --for applied",
		in:   Input{Work: wk(rev), Status: applied(wk(rev), rev, "False", "web: 0/2 replicas ready")}, newest: rev, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", Reached: true, AppliedRevision: rev, Ready: "False", Message: "web: 0/2 replicas ready"},
	}, {
		name: "applied but not healthy for --for healthy",
		in:   Input{Work: wk(rev), Status: applied(wk(rev), rev, "False", "web: 0/2 replicas ready")}, newest: rev, target: Target{Revision: rev, Healthy: true},
		want: Progress{Cluster: "m1", AppliedRevision: rev, Ready: "False", Message: "applied, not healthy: web: 0/2 replicas ready"},
	}, {
		name: "held by the prune guard on an earlier revision",
		in:   Input{Work: heldWork, Status: applied(heldWork, old, "True", "ok")}, newest: rev, target: Target{Revision: rev},
		want: Progress{Cluster: "m1", AppliedRevision: old, Ready: "True", Message: "prune held: revision abc1234 would delete 3 of 4 objects"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Reached(tt.in, tt.newest, tt.target)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllRunning(t *testing.T) {
	row := func(mod func(*ClusterRow)) ClusterRow {
		r := ClusterRow{Name: "m1", Ready: "True", WantRevision: "abc", AppliedRevision: "abc"}
		if mod != nil {
			mod(&r)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		rows []ClusterRow
		want bool
	}{
		{"every member applied and healthy", []ClusterRow{row(nil), row(nil)}, true},
		{"no member at all", nil, false},
		{"one not ready", []ClusterRow{row(nil), row(func(r *ClusterRow) { r.Ready = "False" })}, false},
		{"one on an earlier revision", []ClusterRow{row(func(r *ClusterRow) { r.AppliedRevision = "0ld" })}, false},
		{"one held by the prune guard", []ClusterRow{row(func(r *ClusterRow) { r.PruneHeld = "x" })}, false},
	} {
		if got := (&Report{Clusters: tt.rows}).AllRunning(); got != tt.want {
			t.Errorf("%s: AllRunning = %v, want %v", tt.name, got, tt.want)
		}
	}
}

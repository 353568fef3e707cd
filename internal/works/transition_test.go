package works_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

func TestStatusChanged(t *testing.T) {
	base := func() *workv1alpha1.WorkStatus { return testStatus("rev1", metav1.ConditionTrue, t0) }
	with := func(f func(*workv1alpha1.WorkStatus)) *workv1alpha1.WorkStatus {
		s := base()
		f(s)
		return s
	}
	tests := []struct {
		name     string
		prev     *workv1alpha1.WorkStatus
		next     *workv1alpha1.WorkStatus
		interval time.Duration
		want     bool
	}{
		{"equal", base(), base(), 0, false},
		{"nil and zero", nil, &workv1alpha1.WorkStatus{}, 0, false},
		{"first status", nil, base(), 0, true},
		{"heartbeat only", base(), with(func(s *workv1alpha1.WorkStatus) { s.Heartbeat.Time = t0.Add(time.Hour) }), 0, false},
		{"heartbeat within interval", base(), with(func(s *workv1alpha1.WorkStatus) { s.Heartbeat.Time = t0.Add(59 * time.Second) }), time.Minute, false},
		{"heartbeat past interval", base(), with(func(s *workv1alpha1.WorkStatus) { s.Heartbeat.Time = t0.Add(time.Minute) }), time.Minute, true},
		{"first heartbeat with interval", with(func(s *workv1alpha1.WorkStatus) { s.Heartbeat = nil }), base(), time.Minute, true},
		{"heartbeat removed", base(), with(func(s *workv1alpha1.WorkStatus) { s.Heartbeat = nil }), time.Minute, false},
		{"transition time only", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions[1].LastTransitionTime.Time = t0.Add(time.Hour) }), 0, false},
		{"observed generation only", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions[0].ObservedGeneration = 4 }), 0, false},
		{"condition status", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions[1].Status = metav1.ConditionFalse }), 0, true},
		{"condition reason", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions[1].Reason = "Progressing" }), 0, true},
		{"condition message", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions[1].Message = "2/3 ready" }), 0, true},
		{"condition removed", base(), with(func(s *workv1alpha1.WorkStatus) { s.Conditions = s.Conditions[1:] }), 0, true},
		{"condition order", base(), reversed(base()), 0, false},
		{"empty and nil lists", with(func(s *workv1alpha1.WorkStatus) { s.Objects = nil }),
			with(func(s *workv1alpha1.WorkStatus) { s.Objects = []workv1alpha1.ObjectResult{} }), 0, false},
		{"applied revision", base(), testStatus("rev2", metav1.ConditionTrue, t0), 0, true},
		{"agent version", base(), with(func(s *workv1alpha1.WorkStatus) { s.AgentVersion = "v0.2.0" }), 0, true},
		{"object action", with(func(s *workv1alpha1.WorkStatus) {
			s.Objects = []workv1alpha1.ObjectResult{{ObjectRef: s.Inventory[0], Action: "Created"}}
		}), with(func(s *workv1alpha1.WorkStatus) {
			s.Objects = []workv1alpha1.ObjectResult{{ObjectRef: s.Inventory[0], Action: "Unchanged"}}
		}), 0, true},
		{"drift time below a second", with(func(s *workv1alpha1.WorkStatus) {
			s.Drift = []workv1alpha1.DriftRecord{{ObjectRef: s.Inventory[0], Action: "Corrected", Time: metav1.Time{Time: t0}}}
		}), with(func(s *workv1alpha1.WorkStatus) {
			s.Drift = []workv1alpha1.DriftRecord{{ObjectRef: s.Inventory[0], Action: "Corrected", Time: metav1.Time{Time: t0.Add(300 * time.Millisecond)}}}
		}), 0, false},
		{"new drift record", base(), with(func(s *workv1alpha1.WorkStatus) {
			s.Drift = []workv1alpha1.DriftRecord{{ObjectRef: s.Inventory[0], Action: "Corrected", Time: metav1.Time{Time: t0}}}
		}), 0, true},
	}
	for _, tt := range tests {
		if got := works.StatusChanged(tt.prev, tt.next, tt.interval); got != tt.want {
			t.Errorf("%s: StatusChanged = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNormalizeDoesNotModifyItsInput(t *testing.T) {
	in := reversed(testStatus("rev1", metav1.ConditionTrue, t0.Add(time.Millisecond)))
	first := in.Conditions[0].Type
	out := works.Normalize(in)
	if in.Conditions[0].Type != first || in.Heartbeat.Nanosecond() == 0 {
		t.Errorf("Normalize changed its input")
	}
	if out.Conditions[0].Type != "Applied" || out.Inventory[0].Name != "a" || out.Heartbeat.Nanosecond() != 0 {
		t.Errorf("Normalize = %+v", out)
	}
}

func TestSettleKeepsTransitionTimesOfUnchangedConditions(t *testing.T) {
	prev := testStatus("rev1", metav1.ConditionTrue, t0)
	next := testStatus("rev2", metav1.ConditionFalse, t0.Add(time.Hour))
	next.Conditions = append(next.Conditions, metav1.Condition{Type: "Healthy", Status: metav1.ConditionTrue, Reason: "Current"})
	now := t0.Add(2*time.Hour + 300*time.Millisecond)
	got := works.Settle(prev, next, now)
	want := map[string]time.Time{
		"Applied": t0,                        // status unchanged: the earlier transition stands
		"Healthy": now.Truncate(time.Second), // no time given: now
		"Ready":   t0.Add(time.Hour),         // status changed: the applier's time
	}
	for _, c := range got.Conditions {
		if !c.LastTransitionTime.Time.Equal(want[c.Type]) {
			t.Errorf("%s: lastTransitionTime = %s, want %s", c.Type, c.LastTransitionTime.Time, want[c.Type])
		}
	}
	if next.Conditions[0].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("settle changed its input")
	}
}

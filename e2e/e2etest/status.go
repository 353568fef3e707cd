package e2etest

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Condition returns the condition typ of st, nil when absent or st is nil.
func Condition(st *workv1alpha1.WorkStatus, typ string) *metav1.Condition {
	if st == nil {
		return nil
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether st's Ready condition is True.
func IsReady(st *workv1alpha1.WorkStatus) bool {
	c := Condition(st, workv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// DescribeStatus renders the parts of a status a failing wait should show.
func DescribeStatus(st *workv1alpha1.WorkStatus) string {
	if st == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "applied=%q agent=%q message=%q", Short(st.AppliedRevision), st.AgentVersion, st.Message)
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(&b, " inventory=%d", len(st.Inventory))
	if st.Heartbeat != nil {
		fmt.Fprintf(&b, " heartbeat=%s", st.Heartbeat.Format(time.RFC3339))
	}
	return b.String()
}

// Short returns the first 12 characters of a revision, for messages.
func Short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Deref returns *p, or "<nil>" when p is nil: a replica count for a
// message.
func Deref(p *int32) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}

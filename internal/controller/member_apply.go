package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// Condition types of a Work status.
const (
	ConditionApplied = "Applied"
	ConditionHealthy = "Healthy"
	ConditionReady   = "Ready"
)

// reconcile brings the member to its latest Work and returns when to run
// again (0: only on the next wake-up). An unchanged Work whose objects are
// healthy costs no API call.
func (m *member) reconcile(ctx context.Context) time.Duration {
	m.mu.Lock()
	w, probe := m.work, m.probe
	m.mu.Unlock()
	if w == nil {
		return 0
	}
	if m.status == nil {
		st, err := m.c.status.GetStatus(ctx, m.name)
		if err != nil {
			m.log.Error(err, "failed to read the last status")
			return m.backoff()
		}
		m.status = st
	}
	st := m.status.DeepCopy()
	if !ready(probe) {
		setCondition(st, ConditionReady, metav1.ConditionFalse, "MemberNotReady", "the member did not answer its last probe; applying waits", w)
		m.write(ctx, st)
		return 0 // the next successful probe wakes us
	}
	d := digest(w)
	if st.AppliedDigest == d && allHealthy(st) {
		return 0
	}
	mgr, err := m.manager(ctx)
	if err != nil {
		setCondition(st, ConditionReady, metav1.ConditionFalse, "NoClient", err.Error(), w)
		m.write(ctx, st)
		return m.backoff()
	}
	if st.AppliedDigest != d {
		if !m.apply(ctx, mgr, w, st) {
			m.write(ctx, st)
			return m.backoff()
		}
		st.AppliedDigest, st.AppliedRevision = d, w.Spec.SourceRevision
	}
	healthy := m.health(ctx, mgr, st, w)
	m.failures = 0
	m.write(ctx, st)
	if !healthy {
		return m.c.opts.HealthInterval
	}
	return 0
}

// apply applies w and folds the result into st; false when anything failed.
func (m *member) apply(ctx context.Context, mgr *apply.Manager, w *workv1alpha1.Work, st *workv1alpha1.WorkStatus) bool {
	objs, err := Objects(w)
	if err != nil {
		setCondition(st, ConditionApplied, metav1.ConditionFalse, "InvalidWork", err.Error(), w)
		return false
	}
	res, err := mgr.Apply(ctx, objs, st.Inventory)
	if res != nil {
		st.Inventory, st.Objects = res.Inventory, res.Objects
	}
	switch {
	case err != nil:
		setCondition(st, ConditionApplied, metav1.ConditionFalse, "ApplyFailed", err.Error(), w)
		m.log.Error(err, "apply failed", "revision", short(w.Spec.SourceRevision))
		return false
	case res.Failed > 0:
		msg := fmt.Sprintf("%d of %d objects failed: %s", res.Failed, len(res.Objects), firstFailure(res))
		setCondition(st, ConditionApplied, metav1.ConditionFalse, "ApplyFailed", msg, w)
		m.log.Info("apply incomplete", "revision", short(w.Spec.SourceRevision), "failed", res.Failed)
		return false
	}
	setCondition(st, ConditionApplied, metav1.ConditionTrue, "Applied", res.String(), w)
	m.log.Info("applied", "revision", short(w.Spec.SourceRevision), "result", res.String())
	return true
}

func firstFailure(res *apply.Result) string {
	for _, o := range res.Objects {
		if o.Action == apply.ActionFailed {
			return o.Message
		}
	}
	return ""
}

// health reads kstatus for the inventory and sets Healthy and Ready.
func (m *member) health(ctx context.Context, mgr *apply.Manager, st *workv1alpha1.WorkStatus, w *workv1alpha1.Work) bool {
	results, err := mgr.Health(ctx, st.Inventory)
	if err != nil {
		setCondition(st, ConditionHealthy, metav1.ConditionUnknown, "HealthUnknown", err.Error(), w)
		setCondition(st, ConditionReady, metav1.ConditionFalse, "HealthUnknown", err.Error(), w)
		return false
	}
	health := map[workv1alpha1.ObjectRef]workv1alpha1.ObjectResult{}
	for _, r := range results {
		health[r.ObjectRef] = r
	}
	waiting := 0
	for i := range st.Objects {
		if h, ok := health[st.Objects[i].ObjectRef]; ok {
			st.Objects[i].Health = h.Health
			if h.Health == apply.HealthNotFound {
				// Deleted on the member (or the member was rebuilt): apply
				// again instead of waiting for it to appear.
				st.AppliedDigest = ""
			}
			if h.Health != apply.HealthCurrent {
				waiting++
			}
		}
	}
	if waiting > 0 {
		msg := fmt.Sprintf("%d of %d objects not healthy yet", waiting, len(st.Inventory))
		setCondition(st, ConditionHealthy, metav1.ConditionFalse, "Progressing", msg, w)
		setCondition(st, ConditionReady, metav1.ConditionFalse, "Progressing", msg, w)
		return false
	}
	msg := fmt.Sprintf("revision %s applied; %d objects healthy", short(w.Spec.SourceRevision), len(st.Inventory))
	setCondition(st, ConditionHealthy, metav1.ConditionTrue, "Healthy", msg, w)
	setCondition(st, ConditionReady, metav1.ConditionTrue, "Ready", msg, w)
	return true
}

func allHealthy(st *workv1alpha1.WorkStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == ConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func (m *member) manager(ctx context.Context) (*apply.Manager, error) {
	if m.mgr != nil {
		return m.mgr, nil
	}
	m.mu.Lock()
	cl := m.cluster
	m.mu.Unlock()
	cfg, err := m.c.creds.Config(ctx, cl)
	if err != nil {
		return nil, err
	}
	mgr, err := apply.NewForConfig(cfg, m.c.opts.Apply)
	if err != nil {
		return nil, err
	}
	m.mgr = mgr
	return mgr, nil
}

// write stores st; the store skips writes that change nothing.
func (m *member) write(ctx context.Context, st *workv1alpha1.WorkStatus) {
	st.AgentVersion = m.c.opts.Version
	if err := m.c.status.PutStatus(ctx, m.name, st); err != nil {
		m.log.Error(err, "failed to write status")
		return
	}
	m.status = st
}

// backoff doubles the retry delay up to RetryMax.
func (m *member) backoff() time.Duration {
	d := m.c.opts.RetryMin << min(m.failures, 16)
	m.failures++
	return min(d, m.c.opts.RetryMax)
}

// setCondition sets one condition, keeping the transition time when the
// status does not change.
func setCondition(st *workv1alpha1.WorkStatus, typ string, status metav1.ConditionStatus, reason, msg string, _ *workv1alpha1.Work) {
	for i, c := range st.Conditions {
		if c.Type == typ {
			if c.Status != status {
				st.Conditions[i].LastTransitionTime = metav1.Now()
			}
			st.Conditions[i].Status, st.Conditions[i].Reason, st.Conditions[i].Message = status, reason, msg
			return
		}
	}
	st.Conditions = append(st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.Now()})
}

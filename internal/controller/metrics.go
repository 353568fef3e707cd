package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/render"
)

// The controller's metrics bookkeeping: what a render, a failover and the
// members' Work states add to the Prometheus collectors.

// recordFailovers logs and counts the evictions this render made, and
// logs those it ended.
func (c *Controller) recordFailovers(res *render.Result, now time.Time) {
	for _, b := range res.Bindings {
		for _, e := range b.Evictions {
			if e.Ended != "" {
				c.log.Info("eviction ended", logging.KeyTemplate, b.Key.String(), "from", e.Cluster, "reason", e.Ended)
			}
			if !e.Since.Equal(now) {
				continue // decided by an earlier render
			}
			var to []string
			for _, t := range b.Targets {
				if t.Evicted == nil {
					to = append(to, t.Cluster)
				}
			}
			c.log.Info("failover", logging.KeyTemplate, b.Key.String(), "from", e.Cluster, "to", to, "reason", e.Reason, "purgeMode", e.PurgeMode)
			for _, t := range to {
				c.opts.Metrics.Failover(e.Cluster, t)
			}
			if !e.NotReadySince.IsZero() {
				c.opts.Metrics.FailoverDuration(now.Sub(e.NotReadySince))
			}
		}
	}
}

// recordRender counts schedule attempts, policy matches and cluster
// readiness.
func (c *Controller) recordRender(res *render.Result) {
	m := c.opts.Metrics
	if m == nil {
		return
	}
	matches := map[string]int{"PropagationPolicy": 0, "ClusterPropagationPolicy": 0}
	for _, b := range res.Bindings {
		if b.Policy == nil {
			continue
		}
		if b.Policy.ClusterScoped {
			matches["ClusterPropagationPolicy"]++
		} else {
			matches["PropagationPolicy"]++
		}
		switch {
		case b.ScheduleError == "":
			m.ScheduleAttempt("scheduled")
		case b.Decision != nil && len(b.Decision.Clusters) == 0:
			m.ScheduleAttempt("unschedulable")
		default:
			m.ScheduleAttempt("error")
		}
	}
	for kind, n := range matches {
		m.PolicyMatches(kind, n)
	}
	for _, cl := range res.Clusters {
		status := string(metav1.ConditionTrue)
		if cl.Status != nil {
			status = string(metav1.ConditionUnknown)
			if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ConditionReady); c != nil {
				status = string(c.Status)
			}
		}
		m.ClusterReadyStatus(cl.Name, status)
	}
}

// workState classifies a Work for the propagit_works metric.
func workState(st *workv1alpha1.WorkStatus, w *workv1alpha1.Work) string {
	if w.Spec.Suspended {
		return metrics.WorkSuspended
	}
	if st == nil {
		return metrics.WorkProgressing
	}
	switch {
	case meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady):
		return metrics.WorkApplied
	case meta.IsStatusConditionFalse(st.Conditions, workv1alpha1.ConditionApplied):
		return metrics.WorkFailed
	}
	return metrics.WorkProgressing
}

// recordWorks sets the propagit_works gauge from the members' last states.
func (c *Controller) recordWorks() {
	// One snapshot and its publication at a time: two workers finishing
	// together must not publish in the wrong order.
	c.worksGauge.Lock()
	defer c.worksGauge.Unlock()
	counts := map[string]int{}
	c.mu.Lock()
	for _, m := range c.members {
		m.mu.Lock()
		if m.state != "" {
			counts[m.state]++
		}
		m.mu.Unlock()
	}
	c.mu.Unlock()
	c.opts.Metrics.SetWorks(counts)
}

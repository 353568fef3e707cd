package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/notify"
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
			c.event(e.Cluster, corev1.EventTypeWarning, workv1alpha1.EventFailover, fmt.Sprintf("%s moved to %v (purge mode %s): %s",
				b.Key, to, e.PurgeMode, e.Reason))
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
	c.notifyRollout()
}

// event records an Event on cluster's Work when Events are on.
func (c *Controller) event(cluster, eventType, reason, message string) {
	if c.opts.Events != nil {
		c.opts.Events.Event(cluster, eventType, reason, message)
	}
}

// notifyRollout tells the notifier where the revision in force stands:
// push members by their workers' last state, pull members by the status
// their agents last wrote (read once per pass, see readPullStates). A
// member whose Work did not change since an older revision runs the
// newest one's content and counts for it.
func (c *Controller) notifyRollout() {
	if c.opts.Notifier == nil {
		return
	}
	c.mu.Lock()
	rec, last := c.recorded, c.last
	r := notify.Rollout{Waves: c.rolloutNote.waves, Stopped: c.rolloutNote.stopped}
	if last != nil {
		r.Revision = last.revision
	}
	states := map[string]string{}
	for name, m := range c.members {
		m.mu.Lock()
		states[name] = m.state
		m.mu.Unlock()
	}
	for name, s := range c.pullStates {
		states[name] = s
	}
	c.mu.Unlock()
	if rec == nil {
		return
	}
	for _, w := range rec.works {
		r.Total++
		switch states[w.Spec.Cluster] {
		case metrics.WorkApplied:
			r.Healthy++
		case metrics.WorkFailed:
			r.Failed++
		}
	}
	c.opts.Notifier.Observe(context.Background(), r)
}

// readPullStates reads, for the notifier, the state of every pull
// member's Work from the status its agent wrote, in parallel, each read
// under the probe timeout; an unreadable one counts as on its way.
func (c *Controller) readPullStates(ctx context.Context, ws []*workv1alpha1.Work) {
	if c.opts.Notifier == nil {
		return
	}
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range ws {
		if w.Spec.SyncMode != clusterv1alpha1.SyncModePull {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
			defer cancel()
			st, err := c.status.GetStatus(rctx, w.Spec.Cluster)
			state := metrics.WorkProgressing
			if err == nil && st != nil && st.AppliedDigest == workv1alpha1.Digest(w) {
				state = workState(st, w)
			}
			mu.Lock()
			out[w.Spec.Cluster] = state
			mu.Unlock()
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.pullStates = out
	c.mu.Unlock()
}

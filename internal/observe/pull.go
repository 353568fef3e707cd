package observe

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
)

// pull is a pull member's state as its agent reported it; Ready becomes
// Unknown when the heartbeat is older than PullHeartbeatTimeout. Without a
// report the state declared in Git stays (nil). A status that cannot be
// read is logged, and the report read last stands in for it: its heartbeat
// keeps ageing, so a store that stays unreadable ends in Unknown too.
func (o *Observer) pull(ctx context.Context, name string) *clusterv1alpha1.ClusterStatus {
	rctx, cancel := o.withTimeout(ctx)
	defer cancel()
	ws, err := o.status.GetStatus(rctx, name)
	o.mu.Lock()
	if err != nil {
		o.log.Error(err, "failed to read a pull member's status; using the last report read", logging.KeyCluster, name)
		ws = o.pulled[name]
	} else if ws == nil || ws.Cluster == nil {
		delete(o.pulled, name)
		ws = nil
	} else {
		o.pulled[name] = &workv1alpha1.WorkStatus{Cluster: ws.Cluster.DeepCopy(), Heartbeat: ws.Heartbeat.DeepCopy()}
	}
	o.mu.Unlock()
	if ws == nil {
		return nil
	}
	return o.age(ws)
}

// age returns the member state of report, with Ready Unknown once its
// heartbeat is older than PullHeartbeatTimeout.
func (o *Observer) age(report *workv1alpha1.WorkStatus) *clusterv1alpha1.ClusterStatus {
	st := report.Cluster.DeepCopy()
	timeout := o.opts.PullHeartbeatTimeout
	if timeout > 0 && (report.Heartbeat == nil || o.clock.Since(report.Heartbeat.Time) > timeout) {
		// Not Ready since the heartbeat went stale, not since this look:
		// failover tolerations count from the transition time.
		since := o.clock.Now()
		if report.Heartbeat != nil {
			since = report.Heartbeat.Add(timeout)
		}
		st.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: workv1alpha1.ReasonAgentHeartbeatStale, Message: fmt.Sprintf("no heartbeat from the agent for more than %s", timeout),
			LastTransitionTime: metav1.NewTime(since)}}
	}
	return st
}

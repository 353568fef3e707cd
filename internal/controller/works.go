package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/render"
)

// probe reads the live state of every push member concurrently. Members
// whose credentials are missing are reported unreachable.
func (c *Controller) probe(ctx context.Context, clusters []load.Cluster) map[string]*clusterv1alpha1.ClusterStatus {
	out := map[string]*clusterv1alpha1.ClusterStatus{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, cl := range pushClusters(clusters) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if eff, ok := c.probes.recent(cl, c.clock.Now(), c.opts.ProbeInterval); ok {
				mu.Lock()
				out[cl.Name] = eff
				mu.Unlock()
				return
			}
			pctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
			defer cancel()
			st := c.probeOne(pctx, cl)
			if readyStatus(st) != metav1.ConditionTrue {
				c.log.V(1).Info("member probe failed", logging.KeyCluster, cl.Name, "reason", readyReason(st))
			}
			eff := c.readiness.observe(cl.Name, st, c.clock.Now())
			c.probes.keep(cl, eff, c.clock.Now())
			mu.Lock()
			out[cl.Name] = eff
			mu.Unlock()
			if m := c.member(cl.Name); m != nil {
				m.setProbe(st)
			}
		}()
	}
	wg.Wait()
	for _, cl := range clusters {
		if cl.Cluster.Spec.SyncMode == clusterv1alpha1.SyncModePull {
			if st := c.pullState(ctx, cl.Cluster.Name); st != nil {
				out[cl.Cluster.Name] = st
			}
		}
	}
	return out
}

// pullState is a pull member's state as its agent reported it; Ready
// becomes Unknown when the heartbeat is older than PullHeartbeatTimeout.
// Without a report the state declared in Git stays (nil).
func (c *Controller) pullState(ctx context.Context, name string) *clusterv1alpha1.ClusterStatus {
	ws, err := c.status.GetStatus(ctx, name)
	if err != nil || ws == nil || ws.Cluster == nil {
		return nil
	}
	st := ws.Cluster.DeepCopy()
	timeout := c.opts.PullHeartbeatTimeout
	if timeout > 0 && (ws.Heartbeat == nil || c.clock.Since(ws.Heartbeat.Time) > timeout) {
		// Not Ready since the heartbeat went stale, not since this look:
		// failover tolerations count from the transition time.
		since := c.clock.Now()
		if ws.Heartbeat != nil {
			since = ws.Heartbeat.Add(timeout)
		}
		st.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: workv1alpha1.ReasonAgentHeartbeatStale, Message: fmt.Sprintf("no heartbeat from the agent for more than %s", timeout),
			LastTransitionTime: metav1.NewTime(since)}}
	}
	return st
}

func (c *Controller) probeOne(ctx context.Context, cl *clusterv1alpha1.Cluster) *clusterv1alpha1.ClusterStatus {
	cfg, err := c.creds.Config(ctx, cl)
	if err != nil {
		st := &clusterv1alpha1.ClusterStatus{}
		st.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: workv1alpha1.ReasonNoCredentials, Message: err.Error(), LastTransitionTime: metav1.NewTime(c.clock.Now())}}
		return st
	}
	return cluster.Probe(ctx, cfg, c.clock.Now())
}

// renderWorks renders cur with the live status, the previous placement
// recorded in the Works and, while a Gracefully eviction waits on it, the
// health the clusters report. Every declared cluster gets a Work, an empty
// one when it receives nothing, so what it ran before is pruned.
// It also returns what the Works hold, the history of the next render once
// they are recorded.
func (c *Controller) renderWorks(ctx context.Context, cur *loaded, status map[string]*clusterv1alpha1.ClusterStatus) ([]*workv1alpha1.Work, *recording, error) {
	rec, err := c.previous(ctx)
	if err != nil {
		return nil, nil, err
	}
	now := c.clock.Now()
	res := render.Render(render.Input{Set: cur.set, Status: status, Previous: rec.previous, Options: c.opts.Render, Now: now,
		Health: c.health(ctx, rec), Memo: c.memo})
	c.recordRender(res)
	c.recordFailovers(res, now)
	byCluster := map[string]render.Work{}
	for _, w := range res.Works {
		byCluster[w.Cluster] = w
	}
	var out []*workv1alpha1.Work
	for _, cl := range res.Clusters {
		w, err := toWork(cl, cur.revision, byCluster[cl.Name].Objects)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, w)
	}
	return out, newRecording(out, res.Works), nil
}

// toWork converts rendered objects to a Work record.
func toWork(cl *clusterv1alpha1.Cluster, revision string, objs []*unstructured.Unstructured) (*workv1alpha1.Work, error) {
	mode := cl.Spec.SyncMode
	if mode == "" {
		mode = clusterv1alpha1.SyncModePush
	}
	w := &workv1alpha1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: cl.Name, Annotations: clusterAnnotations(cl)},
		Spec: workv1alpha1.WorkSpec{Cluster: cl.Name, FormatVersion: workv1alpha1.FormatVersion,
			SourceRevision: revision, SyncMode: mode},
	}
	var err error
	if w.Spec.Manifests, err = workv1alpha1.EncodeManifests(objs); err != nil {
		return nil, err
	}
	if len(w.Spec.Manifests) == 0 {
		w.Spec.Manifests = nil
	}
	return w, nil
}

// clusterAnnotations record on a Work the cluster as the render saw it: its
// Ready status (a cluster without status counts as Ready) and its taints.
// Nothing that changes on every probe (a pull agent stamps Ready with the
// probe time), so the Work is rewritten only on a real transition.
func clusterAnnotations(cl *clusterv1alpha1.Cluster) map[string]string {
	ann := map[string]string{workv1alpha1.AnnotationClusterReady: string(metav1.ConditionTrue)}
	if cl.Status != nil {
		ann[workv1alpha1.AnnotationClusterReady] = string(metav1.ConditionUnknown)
		if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ConditionReady); c != nil {
			ann[workv1alpha1.AnnotationClusterReady] = string(c.Status)
		}
	}
	var taints []string
	for _, t := range render.Taints(cl) {
		taints = append(taints, t.ToString())
	}
	if len(taints) > 0 {
		ann[workv1alpha1.AnnotationClusterTaints] = strings.Join(taints, ",")
	}
	return ann
}

// previous is what the Works last recorded hold. The store is read once,
// at start (a restart resumes from it); after that the controller, the
// store's only writer, remembers what it recorded.
func (c *Controller) previous(ctx context.Context) (*recording, error) {
	if c.recorded != nil {
		return c.recorded, nil
	}
	stored, err := c.works.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to read the recorded works: %w", err)
	}
	rw := make([]render.Work, 0, len(stored))
	for _, w := range stored {
		objs, err := workv1alpha1.Objects(w)
		if err != nil {
			return nil, err
		}
		rw = append(rw, render.Work{Cluster: w.Spec.Cluster, Objects: objs})
	}
	return newRecording(stored, rw), nil
}

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
			status = string(readyStatus(cl.Status))
		}
		m.ClusterReadyStatus(cl.Name, status)
	}
}

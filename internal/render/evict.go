package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/schedule"
)

// Eviction is a cluster a template was moved off because the cluster is not
// Ready (Karmada's taint-based cluster failover) or because the template ran
// unhealthy there for longer than the policy tolerates (application
// failover). While it is pending, the
// cluster is excluded from scheduling; with the Gracefully and Never purge
// modes the old copy keeps running there until the task ends.
type Eviction struct {
	Cluster   string    `json:"cluster"`
	Since     time.Time `json:"since"`
	PurgeMode string    `json:"purgeMode"`
	Replicas  int32     `json:"replicas"`
	// Until is when a Gracefully task ends (zero: never, for Never).
	Until  time.Time `json:"until,omitzero"`
	Reason string    `json:"reason,omitempty"`
	// NotReadySince is when the cluster turned NotReady.
	NotReadySince time.Time `json:"notReadySince,omitzero"`
	// Ended says why the eviction ends in this render ("" while it is
	// pending): the old copy is no longer kept.
	Ended string `json:"ended,omitempty"`
	// PreservedLabels are what statePreservation read from the evicted
	// cluster's status, put on the copies the template moved to.
	PreservedLabels map[string]string `json:"preservedLabels,omitempty"`
}

// Default failover timings (Karmada's CRD and webhook defaults).
const (
	defaultGracePeriod = 600 * time.Second
	// defaultAppToleration is decisionConditions.tolerationSeconds when
	// the policy leaves it out.
	defaultAppToleration = 300 * time.Second
)

// Why a Gracefully eviction ends (Eviction.Ended).
const (
	EndedGracePeriod = "grace period over"
	EndedHealthy     = "new placement healthy"
)

// evict applies failover to the previous placement of one template: every
// previous cluster that has not been Ready, or on which the template has run
// unhealthy (unhealthy: cluster → since when), for longer than the policy
// tolerates is taken out of the placement and becomes an eviction. Policies
// without a failover section never move (failover is the user's choice).
// Pending evictions whose grace period is over end, and their cluster is
// free again. now zero disables time-based decisions (render without a
// clock).
func evict(p *policyv1alpha1.PropagationPolicy, prev *PreviousTemplate, clusters []*clusterv1alpha1.Cluster, unhealthy map[string]time.Time,
	reflected map[string]map[string]any, now time.Time) (schedule.Previous, []Eviction) {
	placement := schedule.Previous{AffinityName: prev.Placement.AffinityName}
	var evictions []Eviction
	for _, e := range prev.Evictions {
		if !now.IsZero() && !e.Until.IsZero() && !now.Before(e.Until) {
			e.Ended = EndedGracePeriod
		}
		evictions = append(evictions, e)
	}
	byName := map[string]*clusterv1alpha1.Cluster{}
	for _, c := range clusters {
		byName[c.Name] = c
	}
	for _, tc := range prev.Placement.Clusters {
		c := byName[tc.Name]
		if e, ok := mustEvict(p, c, tc, now); ok {
			if fo := p.Spec.Failover; fo.Cluster != nil {
				e.PreservedLabels = preserve(fo.Cluster.StatePreservation, reflected[tc.Name])
			}
			evictions = append(evictions, e)
			continue
		}
		if e, ok := mustEvictApplication(p, c, tc, unhealthy, now); ok {
			e.PreservedLabels = preserve(p.Spec.Failover.Application.StatePreservation, reflected[tc.Name])
			evictions = append(evictions, e)
			continue
		}
		placement.Clusters = append(placement.Clusters, tc)
	}
	for _, e := range evictions {
		if e.Ended == "" {
			placement.EvictedClusters = append(placement.EvictedClusters, e.Cluster)
		}
	}
	return placement, evictions
}

// keepEvicted keeps the old copy on each cluster whose eviction is pending
// with purge mode Gracefully or Never, frozen as it was last rendered there:
// Karmada keeps the old Work and stops updating it, so the copy runs what it
// ran when the cluster failed. With Directly nothing is kept, and the copy is
// pruned as soon as the cluster is reachable.
func keepEvicted(b *Binding, prev *PreviousTemplate) {
	for i := range b.Evictions {
		e := &b.Evictions[i]
		old := prev.Objects[e.Cluster]
		if e.PurgeMode == policyv1alpha1.PurgeDirectly || e.Ended != "" || old == nil {
			continue
		}
		obj := old.DeepCopy()
		stampEviction(obj, e)
		b.Targets = append(b.Targets, &Target{Cluster: e.Cluster, Replicas: e.Replicas, Scheduled: true, Evicted: e, Object: obj})
	}
	slices.SortFunc(b.Targets, func(x, y *Target) int { return strings.Compare(x.Cluster, y.Cluster) })
}

// endHealthyEvictions ends the pending Gracefully evictions of every
// binding whose new placement is healthy, before their grace period, and
// drops the old copies (Karmada removes the task, then the old Work). It
// reports whether any eviction ended.
func endHealthyEvictions(bindings []*Binding, prev *Previous, health Health, clusters []*clusterv1alpha1.Cluster) bool {
	if health == nil {
		return false
	}
	ready := map[string]bool{}
	for _, c := range clusters {
		_, _, down := notReady(c)
		ready[c.Name] = !down
	}
	ended := false
	for _, b := range bindings {
		if !pendingGraceful(b) || !placementHealthy(b, prev.lookup(b.Key), health, ready) {
			continue
		}
		for i, e := range b.Evictions {
			if e.PurgeMode == policyv1alpha1.PurgeGracefully && e.Ended == "" {
				b.Evictions[i].Ended = EndedHealthy
			}
		}
		b.Targets = slices.DeleteFunc(b.Targets, func(t *Target) bool { return t.Evicted != nil && t.Evicted.Ended != "" })
		ended = true
	}
	return ended
}

func pendingGraceful(b *Binding) bool {
	return slices.ContainsFunc(b.Evictions, func(e Eviction) bool {
		return e.PurgeMode == policyv1alpha1.PurgeGracefully && e.Ended == ""
	})
}

// placementHealthy reports whether every cluster b now places the template
// on is Ready and reports healthy the very copy this render gives it: the
// copy last recorded there, unchanged. A copy that changed (new replicas
// after the failover, a new commit) has not proven itself yet, and an empty
// placement never counts: the old copy would be the only one left.
func placementHealthy(b *Binding, prev *PreviousTemplate, health Health, ready map[string]bool) bool {
	n := 0
	for _, t := range b.Targets {
		if t.Evicted != nil {
			continue
		}
		old := prev.Objects[t.Cluster]
		if t.Object == nil || old == nil || !ready[t.Cluster] || !health[t.Cluster][b.Key] || !sameObject(old, t.Object) {
			return false
		}
		n++
	}
	return n > 0
}

// sameObject compares two objects by their JSON encoding, the form Works
// record them in.
func sameObject(a, b *unstructured.Unstructured) bool {
	x, errX := json.Marshal(a.Object)
	y, errY := json.Marshal(b.Object)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// mustEvict reports whether tc must leave cluster c now: a NoExecute taint
// on c — the one a cluster that is not Ready carries, or one from Git or a
// ClusterTaintPolicy — that the policy does not tolerate for long enough.
func mustEvict(p *policyv1alpha1.PropagationPolicy, c *clusterv1alpha1.Cluster, tc schedule.TargetCluster, now time.Time) (Eviction, bool) {
	fo := p.Spec.Failover
	if fo == nil || c == nil || now.IsZero() {
		return Eviction{}, false
	}
	for _, nt := range noExecuteTaints(c) {
		wait, tolerated := toleration(p, nt.taint)
		if tolerated && wait < 0 {
			continue // tolerated forever
		}
		if now.Before(nt.since.Add(wait)) {
			continue
		}
		e := Eviction{Cluster: c.Name, Since: now, Replicas: tc.Replicas, PurgeMode: purgeMode(fo)}
		if nt.readiness {
			e.NotReadySince = nt.since
			e.Reason = "cluster " + c.Name + " not Ready since " + nt.since.UTC().Format(time.RFC3339) + " (taint " + nt.taint.Key + ":NoExecute)"
		} else {
			e.Reason = "cluster " + c.Name + " has taint " + nt.taint.ToString()
			if !nt.since.IsZero() {
				e.Reason += " since " + nt.since.UTC().Format(time.RFC3339)
			}
		}
		if e.PurgeMode == policyv1alpha1.PurgeGracefully {
			grace := defaultGracePeriod
			if fo.Application != nil && fo.Application.GracePeriodSeconds != nil {
				grace = time.Duration(*fo.Application.GracePeriodSeconds) * time.Second
			}
			e.Until = now.Add(grace)
		}
		return e, true
	}
	return Eviction{}, false
}

// noExecuteTaint is a NoExecute taint on a cluster and since when it has
// been there (zero: unknown, so a policy's tolerationSeconds are already
// over).
type noExecuteTaint struct {
	taint     corev1.Taint
	since     time.Time
	readiness bool
}

// NoExecuteTainted reports whether c carries a NoExecute taint, its
// readiness included: failover may evict from it depending on the clock.
func NoExecuteTainted(c *clusterv1alpha1.Cluster) bool { return len(noExecuteTaints(c)) > 0 }

// noExecuteTaints lists the NoExecute taints of c: the readiness one while
// c is not Ready, since its Ready condition changed, then those in its
// spec (from Git or a ClusterTaintPolicy), since they were added.
func noExecuteTaints(c *clusterv1alpha1.Cluster) []noExecuteTaint {
	var out []noExecuteTaint
	key, since, down := notReady(c)
	if down {
		out = append(out, noExecuteTaint{taint: corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}, since: since, readiness: true})
	}
	for _, t := range c.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoExecute || (down && t.Key == key) {
			continue
		}
		nt := noExecuteTaint{taint: t}
		if t.TimeAdded != nil {
			nt.since = t.TimeAdded.Time
		}
		out = append(out, nt)
	}
	return out
}

// mustEvictApplication reports whether tc must leave the Ready cluster c
// because the template has run unhealthy there for the application
// failover's tolerationSeconds (Karmada's application failover; a cluster
// that is not Ready is cluster failover's business). Health comes from the
// member's reports, so an unreachable member never triggers it.
func mustEvictApplication(p *policyv1alpha1.PropagationPolicy, c *clusterv1alpha1.Cluster, tc schedule.TargetCluster, unhealthy map[string]time.Time, now time.Time) (Eviction, bool) {
	fo := p.Spec.Failover
	if fo == nil || fo.Application == nil || c == nil || now.IsZero() {
		return Eviction{}, false
	}
	since, ok := unhealthy[c.Name]
	if _, _, down := notReady(c); !ok || down {
		return Eviction{}, false
	}
	a := fo.Application
	wait := defaultAppToleration
	if a.DecisionConditions.TolerationSeconds != nil {
		wait = time.Duration(*a.DecisionConditions.TolerationSeconds) * time.Second
	}
	if now.Before(since.Add(wait)) {
		return Eviction{}, false
	}
	e := Eviction{Cluster: c.Name, Since: now, Replicas: tc.Replicas, PurgeMode: normalPurgeMode(a.PurgeMode),
		Reason: "application unhealthy on " + c.Name + " since " + since.UTC().Format(time.RFC3339) + " (tolerationSeconds " + strconv.Itoa(int(wait/time.Second)) + ")"}
	if e.PurgeMode == policyv1alpha1.PurgeGracefully {
		grace := defaultGracePeriod
		if a.GracePeriodSeconds != nil {
			grace = time.Duration(*a.GracePeriodSeconds) * time.Second
		}
		e.Until = now.Add(grace)
	}
	return e, true
}

// Taints returns the taints render sees on c: those declared in Git,
// Karmada's NoSchedule readiness taint and, while c is not Ready, the
// NoExecute taint failover evicts on (Karmada adds it through a
// ClusterTaintPolicy).
func Taints(c *clusterv1alpha1.Cluster) []corev1.Taint {
	out := schedule.EffectiveTaints(c)
	key, _, down := notReady(c)
	if down && !slices.ContainsFunc(out, func(t corev1.Taint) bool { return t.Key == key && t.Effect == corev1.TaintEffectNoExecute }) {
		out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute})
	}
	return out
}

// notReady returns the NoExecute taint key a not-Ready cluster carries and
// since when: not-ready for Ready=False, unreachable for Unknown.
func notReady(c *clusterv1alpha1.Cluster) (string, time.Time, bool) {
	if c.Status == nil {
		return "", time.Time{}, false
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ConditionReady); cond != nil {
		switch cond.Status {
		case "False":
			return clusterv1alpha1.TaintNotReady, cond.LastTransitionTime.Time, true
		case "Unknown":
			return clusterv1alpha1.TaintUnreachable, cond.LastTransitionTime.Time, true
		}
		return "", time.Time{}, false
	}
	return clusterv1alpha1.TaintNotReady, time.Time{}, true
}

// toleration returns how long the policy tolerates a NoExecute taint:
// the smallest tolerationSeconds of a matching clusterToleration (a matching
// toleration without seconds tolerates forever: -1), else the application
// failover decision time, else 0 (evict at once).
func toleration(p *policyv1alpha1.PropagationPolicy, taint corev1.Taint) (time.Duration, bool) {
	found, wait := false, time.Duration(-1)
	for _, t := range p.Spec.Placement.ClusterTolerations {
		if !t.ToleratesTaint(logr.Discard(), &taint, false) {
			continue
		}
		found = true
		if t.TolerationSeconds == nil {
			continue
		}
		d := time.Duration(*t.TolerationSeconds) * time.Second
		if wait < 0 || d < wait {
			wait = d
		}
	}
	if found {
		return wait, true
	}
	if a := p.Spec.Failover.Application; a != nil && a.DecisionConditions.TolerationSeconds != nil {
		return time.Duration(*a.DecisionConditions.TolerationSeconds) * time.Second, false
	}
	return 0, false
}

// purgeMode is the cluster failover purge mode, else the application one,
// with Karmada's older names mapped and Gracefully as the default.
func purgeMode(fo *policyv1alpha1.FailoverBehavior) string {
	mode := ""
	switch {
	case fo.Cluster != nil && fo.Cluster.PurgeMode != "":
		mode = fo.Cluster.PurgeMode
	case fo.Application != nil && fo.Application.PurgeMode != "":
		mode = fo.Application.PurgeMode
	}
	return normalPurgeMode(mode)
}

// normalPurgeMode maps Karmada's older purge mode names to the current ones,
// with Gracefully as the default.
func normalPurgeMode(mode string) string {
	switch mode {
	case policyv1alpha1.PurgeDirectly, policyv1alpha1.PurgeImmediately:
		return policyv1alpha1.PurgeDirectly
	case policyv1alpha1.PurgeNever:
		return policyv1alpha1.PurgeNever
	}
	return policyv1alpha1.PurgeGracefully
}

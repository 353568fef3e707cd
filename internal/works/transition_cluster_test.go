package works_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// A pull agent's probe stamps its cluster's Ready condition with the probe
// time; a probe that finds the same state is no transition, or every probe
// would be a status write.
func TestClusterStateProbeTimeIsNoTransition(t *testing.T) {
	withCluster := func(ready metav1.ConditionStatus, probed time.Time) *workv1alpha1.WorkStatus {
		s := testStatus("rev1", metav1.ConditionTrue, t0)
		s.Cluster = &clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.37.2", Conditions: []metav1.Condition{{
			Type: clusterv1alpha1.ConditionReady, Status: ready, Reason: "ClusterReady", LastTransitionTime: metav1.NewTime(probed),
		}}}
		return s
	}
	prev := withCluster(metav1.ConditionTrue, t0)
	if works.StatusChanged(prev, withCluster(metav1.ConditionTrue, t0.Add(30*time.Second)), 0) {
		t.Error("a later probe of the same cluster state is a transition")
	}
	if !works.StatusChanged(prev, withCluster(metav1.ConditionUnknown, t0.Add(30*time.Second)), 0) {
		t.Error("the cluster's Ready status changing is not a transition")
	}

	now := t0.Add(time.Hour)
	got := works.Settle(prev, withCluster(metav1.ConditionTrue, t0.Add(30*time.Second)), now)
	if lt := got.Cluster.Conditions[0].LastTransitionTime.Time; !lt.Equal(t0) {
		t.Errorf("unchanged cluster Ready: transition time %s, want the stored %s", lt, t0)
	}
	flipped := t0.Add(45 * time.Second)
	got = works.Settle(prev, withCluster(metav1.ConditionUnknown, flipped), now)
	if lt := got.Cluster.Conditions[0].LastTransitionTime.Time; !lt.Equal(flipped) {
		t.Errorf("changed cluster Ready: transition time %s, want the probe's %s", lt, flipped)
	}
}

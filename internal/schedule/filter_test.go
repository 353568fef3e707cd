package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// TestFilters checks each filter's verdict and reason through Schedule with
// a Duplicated placement, so every feasible cluster is in the result.
func TestFilters(t *testing.T) {
	gpu := withTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule)
	tests := []struct {
		name         string
		template     *unstructured.Unstructured
		placement    policyv1alpha1.Placement
		clusters     []*clusterv1alpha1.Cluster
		previous     *Previous
		wantClusters []string
		wantFiltered map[string]string
	}{
		{
			name:         "clusterNames keeps only the named clusters",
			placement:    policyv1alpha1.Placement{ClusterAffinity: affinityNames("a")},
			clusters:     clusters("a", "b"),
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "not in clusterNames"},
		},
		{
			name:         "exclude wins over clusterNames",
			placement:    policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "b"}, ExcludeClusters: []string{"b"}}},
			clusters:     clusters("a", "b"),
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "excluded"},
		},
		{
			name: "labelSelector",
			placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			}},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withLabels("env", "prod")), newCluster("b", withLabels("env", "dev"))},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "labelSelector does not match"},
		},
		{
			name: "fieldSelector on region",
			placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: policyv1alpha1.FieldRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu"}},
				}},
			}},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withRegion("eu")), newCluster("b", withRegion("us"))},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "fieldSelector does not match"},
		},
		{
			name:         "untolerated NoSchedule taint",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a"), newCluster("b", gpu)},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "taint dedicated=gpu:NoSchedule not tolerated"},
		},
		{
			name:         "untolerated NoExecute taint",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withTaint("maintenance", "", corev1.TaintEffectNoExecute))},
			wantClusters: nil,
			wantFiltered: map[string]string{"a": "taint maintenance:NoExecute not tolerated"},
		},
		{
			name:         "PreferNoSchedule is ignored",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withTaint("soft", "", corev1.TaintEffectPreferNoSchedule))},
			wantClusters: []string{"a"},
		},
		{
			name: "equal toleration tolerates the taint",
			placement: policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			}},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", gpu)},
			wantClusters: []string{"a"},
		},
		{
			name:         "exists with an empty key tolerates everything",
			placement:    policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", gpu), newCluster("b", withReady(metav1.ConditionFalse))},
			wantClusters: []string{"a", "b"},
		},
		{
			name:         "toleration with another value does not tolerate",
			placement:    policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{Key: "dedicated", Value: "cpu"}}},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", gpu)},
			wantFiltered: map[string]string{"a": "taint dedicated=gpu:NoSchedule not tolerated"},
		},
		{
			name:         "taints are not checked for previous clusters",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", gpu), newCluster("b", withReady(metav1.ConditionFalse))},
			previous:     previous("a", 2, "b", 2),
			wantClusters: []string{"a", "b"},
		},
		{
			name:         "ready false gives the not-ready taint",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withReady(metav1.ConditionFalse)), newCluster("b", withReady(metav1.ConditionTrue))},
			wantClusters: []string{"b"},
			wantFiltered: map[string]string{"a": "taint cluster.karmada.io/not-ready:NoSchedule not tolerated"},
		},
		{
			name:         "ready unknown gives the unreachable taint",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withReady(metav1.ConditionUnknown))},
			wantFiltered: map[string]string{"a": "taint cluster.karmada.io/unreachable:NoSchedule not tolerated"},
		},
		{
			name:         "nil status is ready with every API (project deviation)",
			template:     loadTemplate(t, "statefulset"),
			clusters:     clusters("a"),
			wantClusters: []string{"a"},
		},
		{
			name:         "API not listed in apiEnablements",
			template:     loadTemplate(t, "statefulset"),
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withStatus())},
			wantFiltered: map[string]string{"a": "API apps/v1 StatefulSet not enabled"},
		},
		{
			name:         "API listed in apiEnablements",
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withStatus())},
			wantClusters: []string{"a"},
		},
		{
			name:         "API is not checked for previous clusters",
			template:     loadTemplate(t, "statefulset"),
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withStatus())},
			previous:     previous("a", 5),
			wantClusters: []string{"a"},
		},
		{
			name: "spread by region filters clusters without a region, even with static weights",
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByRegion, MaxGroups: 2}},
				ReplicaScheduling: staticRS("a", 1, "b", 1),
			},
			clusters:     []*clusterv1alpha1.Cluster{newCluster("a", withRegion("eu")), newCluster("b")},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "no region, but spreadConstraints spread by region"},
		},
		{
			name: "spread by zone filters clusters without zones",
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByZone}},
				ReplicaScheduling: staticRS("a", 1, "b", 1),
			},
			clusters: []*clusterv1alpha1.Cluster{
				newCluster("a", func(c *clusterv1alpha1.Cluster) { c.Spec.Zone = "z1" }),
				newCluster("b"),
			},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "no zones, but spreadConstraints spread by zone"},
		},
		{
			name:         "clusters with a graceful eviction are filtered",
			clusters:     clusters("a", "b"),
			previous:     &Previous{EvictedClusters: []string{"b"}},
			wantClusters: []string{"a"},
			wantFiltered: map[string]string{"b": "graceful eviction in progress"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			template := tt.template
			if template == nil {
				template = deployment(2)
			}
			dec, err := Schedule(Input{Template: template, Placement: tt.placement, Clusters: tt.clusters, Previous: tt.previous})
			wantErr := ""
			if len(tt.wantClusters) == 0 {
				wantErr = "fit"
			}
			if got := errorKind(err); got != wantErr {
				t.Fatalf("Schedule() error kind = %q (%v), want %q", got, err, wantErr)
			}
			var got []string
			for _, tc := range dec.Clusters {
				got = append(got, tc.Name)
			}
			if diff := cmp.Diff(tt.wantClusters, got, equateEmpty); diff != "" {
				t.Errorf("clusters mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFiltered, dec.Terms[0].Filtered, equateEmpty); diff != "" {
				t.Errorf("filtered mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoClusterFitMessage(t *testing.T) {
	dec, err := Schedule(Input{
		Template:  deployment(1),
		Placement: policyv1alpha1.Placement{ClusterAffinity: affinityNames("z")},
		Clusters:  clusters("b", "a"),
	})
	want := &Error{NoClusterFit: true, Message: "0/2 clusters are available: a: not in clusterNames; b: not in clusterNames"}
	if diff := cmp.Diff(error(want), err); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
	if dec.Terms[0].Err != want.Message {
		t.Errorf("term error = %q, want %q", dec.Terms[0].Err, want.Message)
	}
}

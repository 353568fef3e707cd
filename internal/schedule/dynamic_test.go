package schedule

import (
	"testing"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestDynamicWeight(t *testing.T) {
	dyn := policyv1alpha1.Placement{ReplicaScheduling: dynamicRS()}
	runScheduleCases(t, []scheduleCase{
		{
			name:      "first schedule divides by free capacity 6/8/10",
			template:  deployment(12),
			placement: dyn,
			clusters:  freeClusters(6, 8, 10),
			want:      placed("m1", 3, "m2", 4, "m3", 5),
		},
		{
			name:      "first schedule with free 8/8/10",
			template:  deployment(12),
			placement: dyn,
			clusters:  freeClusters(8, 8, 10),
			want:      placed("m1", 4, "m2", 4, "m3", 4),
		},
		{
			name:      "not enough capacity keeps the previous placement",
			template:  deployment(12),
			placement: dyn,
			clusters:  freeClusters(3, 3, 3),
			wantErr:   "other",
		},
		{
			name:      "unknown capacity (no status) is 0, so it fails",
			template:  deployment(1),
			placement: dyn,
			clusters:  clusters("a"),
			wantErr:   "other",
		},
		{
			name:      "scale down is proportional to the previous replicas",
			template:  deployment(6),
			placement: dyn,
			clusters:  freeClusters(0, 0, 0),
			previous:  previous("m1", 2, "m2", 4, "m3", 6),
			want:      placed("m1", 1, "m2", 2, "m3", 3),
		},
		{
			name:      "scale up adds the new replicas by free capacity",
			template:  deployment(24),
			placement: dyn,
			clusters:  freeClusters(10, 10, 10),
			previous:  previous("m1", 2, "m2", 4, "m3", 6),
			want:      placed("m1", 6, "m2", 8, "m3", 10),
		},
		{
			name:      "unchanged replicas keep the previous placement",
			template:  deployment(12),
			placement: dyn,
			clusters:  freeClusters(100, 0, 0),
			previous:  previous("m1", 2, "m2", 4, "m3", 6),
			want:      placed("m1", 2, "m2", 4, "m3", 6),
		},
		{
			name:      "replicas of a vanished cluster are placed again",
			template:  deployment(12),
			placement: dyn,
			clusters:  freeClusters(3, 3),
			previous:  previous("m1", 6, "m3", 6),
			want:      placed("m1", 9, "m2", 3),
		},
	})
}

func TestAggregated(t *testing.T) {
	agg := policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.DivisionAggregated)}
	runScheduleCases(t, []scheduleCase{
		{
			name:      "first schedule uses the fewest clusters that fit",
			template:  deployment(12),
			placement: agg,
			clusters:  freeClusters(6, 8, 10),
			want:      placed("m2", 5, "m3", 7),
		},
		{
			name:      "one cluster that fits everything takes everything",
			template:  deployment(12),
			placement: agg,
			clusters:  freeClusters(12, 8, 10),
			want:      placed("m1", 12),
		},
		{
			name:      "scale down 12 to 6 empties the smaller cluster",
			template:  deployment(6),
			placement: agg,
			clusters:  freeClusters(0, 0),
			previous:  previous("m1", 4, "m2", 8),
			want:      placed("m2", 6),
		},
		{
			name:      "scale down 12 to 8 keeps only the larger cluster",
			template:  deployment(8),
			placement: agg,
			clusters:  freeClusters(100, 100),
			previous:  previous("m1", 4, "m2", 8),
			want:      placed("m2", 8),
		},
		{
			name:      "scale up fills the previous clusters first and spills over",
			template:  deployment(24),
			placement: agg,
			clusters:  freeClusters(4, 6, 8),
			previous:  previous("m1", 4, "m2", 8),
			want:      placed("m1", 7, "m2", 12, "m3", 5),
		},
		{
			name:      "scale up stays on the previous clusters when they have room",
			template:  deployment(24),
			placement: agg,
			clusters:  freeClusters(6, 6, 20),
			previous:  previous("m1", 4, "m2", 8),
			want:      placed("m1", 10, "m2", 14),
		},
		{
			name:      "not enough capacity fails",
			template:  deployment(30),
			placement: agg,
			clusters:  freeClusters(6, 8, 10),
			wantErr:   "other",
		},
	})
}

func TestOverflowAffinities(t *testing.T) {
	overflow := func(rs *policyv1alpha1.ReplicaSchedulingStrategy) policyv1alpha1.Placement {
		return policyv1alpha1.Placement{
			ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
				AffinityName:    "primary",
				ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}},
				OverflowAffinities: []policyv1alpha1.OverflowAffinity{
					{AffinityName: "burst", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}},
				},
			}},
			ReplicaScheduling: rs,
		}
	}
	runScheduleCases(t, []scheduleCase{
		{
			name:      "the main tier fills first, the overflow tier takes the rest",
			template:  deployment(6),
			placement: overflow(divided(policyv1alpha1.DivisionAggregated)),
			clusters:  freeClusters(4, 10, 100),
			want:      placed("m1", 4, "m2", 2),
		},
		{
			name:      "the overflow tier is unused while the main tier has room",
			template:  deployment(6),
			placement: overflow(dynamicRS()),
			clusters:  freeClusters(10, 10),
			want:      placed("m1", 6),
		},
		{
			name:      "replicas left after the last tier fail",
			template:  deployment(6),
			placement: overflow(divided(policyv1alpha1.DivisionAggregated)),
			clusters:  freeClusters(4, 1),
			wantErr:   "other",
		},
		{
			name:      "overflow affinities do not widen the filter for non-workloads",
			template:  configMap(),
			placement: overflow(divided(policyv1alpha1.DivisionAggregated)),
			clusters:  []*clusterv1alpha1.Cluster{newCluster("m1"), newCluster("m2")},
			want:      placed("m1", 0),
		},
	})
}

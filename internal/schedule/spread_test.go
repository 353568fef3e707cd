package schedule

import (
	"testing"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func byCluster(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByCluster, MinGroups: minGroups, MaxGroups: maxGroups}
}

func byRegion(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByRegion, MinGroups: minGroups, MaxGroups: maxGroups}
}

func TestSpreadByCluster(t *testing.T) {
	swapClusters := []*clusterv1alpha1.Cluster{
		newCluster("m1", withFree(1)), newCluster("m2", withFree(5)), newCluster("m3", withFree(20)),
	}
	runScheduleCases(t, []scheduleCase{
		{
			name:      "unset maxGroups selects nothing and fails (duplicated)",
			template:  deployment(2),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByCluster}}},
			clusters:  clusters("a", "b"),
			wantErr:   "other",
		},
		{
			name:     "unset maxGroups selects nothing and fails (divided)",
			template: deployment(2),
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{}},
				ReplicaScheduling: dynamicRS(),
			},
			clusters: freeClusters(5, 5),
			wantErr:  "other",
		},
		{
			name:      "duplicated takes the first maxGroups in candidate order",
			template:  deployment(3),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{byCluster(1, 2)}},
			clusters:  []*clusterv1alpha1.Cluster{newCluster("a", withFree(1)), newCluster("b", withFree(5)), newCluster("c", withFree(5))},
			previous:  previous("c", 3),
			want:      placed("b", 3, "c", 3),
		},
		{
			name:     "divided swaps in a larger cluster when the first ones lack room",
			template: deployment(24),
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{byCluster(1, 2)},
				ReplicaScheduling: dynamicRS(),
			},
			clusters: swapClusters,
			previous: previous("m1", 2),
			want:     placed("m2", 5, "m3", 19),
		},
		{
			name:     "divided fails when even the largest clusters lack room",
			template: deployment(30),
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{byCluster(1, 2)},
				ReplicaScheduling: dynamicRS(),
			},
			clusters: swapClusters,
			previous: previous("m1", 2),
			wantErr:  "other",
		},
		{
			name:     "replicas already placed on a cluster count as available",
			template: deployment(10),
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{byCluster(1, 1)},
				ReplicaScheduling: dynamicRS(),
			},
			clusters: freeClusters(0, 5),
			previous: previous("m1", 10),
			want:     placed("m1", 10),
		},
		{
			name:      "fewer feasible clusters than minGroups fails",
			template:  deployment(2),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{byCluster(3, 3)}},
			clusters:  clusters("a", "b"),
			wantErr:   "other",
		},
		{
			name:      "spreadByLabel alone is not implemented and fails",
			template:  deployment(2),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "team", MaxGroups: 2}}},
			clusters:  clusters("a", "b"),
			wantErr:   "other",
		},
		{
			name:     "zone alone only filters, then fails for lack of a cluster or region constraint",
			template: deployment(2),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByZone, MaxGroups: 2},
			}},
			clusters: []*clusterv1alpha1.Cluster{newCluster("a", func(c *clusterv1alpha1.Cluster) { c.Spec.Zones = []string{"z"} })},
			wantErr:  "other",
		},
		{
			name:     "spreadByLabel next to a cluster constraint is ignored",
			template: deployment(2),
			placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByLabel: "team", MaxGroups: 5}, byCluster(1, 1),
			}},
			clusters: clusters("a", "b"),
			want:     placed("a", 2),
		},
	})
}

func TestSpreadByRegion(t *testing.T) {
	regional := func() []*clusterv1alpha1.Cluster {
		return []*clusterv1alpha1.Cluster{
			newCluster("a", withRegion("r1"), withFree(10)),
			newCluster("b", withRegion("r1"), withFree(10)),
			newCluster("c", withRegion("r2"), withFree(10)),
			newCluster("d", withRegion("r3"), withFree(10)),
		}
	}
	spread := func(scs ...policyv1alpha1.SpreadConstraint) policyv1alpha1.Placement {
		return policyv1alpha1.Placement{SpreadConstraints: scs}
	}
	runScheduleCases(t, []scheduleCase{
		{
			name:      "picks the best-scored regions, one top cluster each, then fills up to cluster maxGroups",
			template:  deployment(2),
			placement: spread(byRegion(2, 2), byCluster(2, 3)),
			clusters:  regional(),
			want:      placed("a", 2, "b", 2, "c", 2),
		},
		{
			name:      "a feasible prefix of the best set of regions is preferred",
			template:  deployment(2),
			placement: spread(byRegion(1, 2), byCluster(2, 3)),
			clusters: []*clusterv1alpha1.Cluster{
				newCluster("a", withRegion("big"), withFree(10)),
				newCluster("b", withRegion("big"), withFree(10)),
				newCluster("c", withRegion("small"), withFree(10)),
			},
			want: placed("a", 2, "b", 2),
		},
		{
			name:      "a region holding a previous cluster scores higher",
			template:  deployment(2),
			placement: spread(byRegion(2, 2), byCluster(2, 3)),
			clusters:  regional(),
			previous:  previous("d", 2),
			want:      placed("a", 2, "b", 2, "d", 2),
		},
		{
			name:      "without a cluster constraint one cluster per region",
			template:  deployment(2),
			placement: spread(byRegion(2, 2)),
			clusters:  regional(),
			want:      placed("a", 2, "c", 2),
		},
		{
			name:      "unset region maxGroups finds no regions and fails",
			template:  deployment(2),
			placement: spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByRegion, MinGroups: 1}, byCluster(1, 3)),
			clusters:  regional(),
			wantErr:   "other",
		},
		{
			name:      "fewer regions than region minGroups fails",
			template:  deployment(2),
			placement: spread(byRegion(4, 4), byCluster(1, 4)),
			clusters:  regional(),
			wantErr:   "other",
		},
		{
			name:      "regions together holding fewer than cluster minGroups fail",
			template:  deployment(2),
			placement: spread(byRegion(1, 1), byCluster(3, 3)),
			clusters:  regional(),
			wantErr:   "other",
		},
		{
			name:     "divided prefers the region that can hold the replicas",
			template: deployment(8),
			placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{byRegion(1, 1), byCluster(1, 2)},
				ReplicaScheduling: dynamicRS(),
			},
			clusters: []*clusterv1alpha1.Cluster{
				newCluster("a", withRegion("r1"), withFree(2)),
				newCluster("b", withRegion("r1"), withFree(2)),
				newCluster("c", withRegion("r2"), withFree(10)),
			},
			want: placed("c", 8),
		},
	})
}

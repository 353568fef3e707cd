package schedule

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// TestScheduleIsDeterministic runs the same input twice, and with the
// clusters in reverse order: the decisions must be identical.
func TestScheduleIsDeterministic(t *testing.T) {
	build := func() []*clusterv1alpha1.Cluster {
		return []*clusterv1alpha1.Cluster{
			newCluster("a", withRegion("r1"), withFree(5)),
			newCluster("b", withRegion("r1"), withFree(5)),
			newCluster("c", withRegion("r2"), withFree(5)),
			newCluster("d", withRegion("r2"), withFree(5)),
			newCluster("e", withRegion("r3"), withFree(5)),
		}
	}
	placements := map[string]policyv1alpha1.Placement{
		"aggregated by region": {
			SpreadConstraints: []policyv1alpha1.SpreadConstraint{byRegion(2, 2), byCluster(2, 3)},
			ReplicaScheduling: divided(policyv1alpha1.DivisionAggregated),
		},
		"dynamic weights with ties": {ReplicaScheduling: dynamicRS()},
		"equal static weights":      {ReplicaScheduling: divided(policyv1alpha1.DivisionWeighted)},
	}
	for name, p := range placements {
		t.Run(name, func(t *testing.T) {
			in := Input{Template: deployment(7), Placement: p, Clusters: build(), Previous: previous("c", 1)}
			first, err1 := Schedule(in)
			second, err2 := Schedule(in)
			reversed := build()
			slices.Reverse(reversed)
			in.Clusters = reversed
			third, err3 := Schedule(in)
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatalf("Schedule() errors: %v, %v, %v", err1, err2, err3)
			}
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("second run differs (-first +second):\n%s", diff)
			}
			if diff := cmp.Diff(first, third); diff != "" {
				t.Errorf("reversed cluster order differs (-first +reversed):\n%s", diff)
			}
		})
	}
}

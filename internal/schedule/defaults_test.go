package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   policyv1alpha1.Placement
		want policyv1alpha1.Placement
	}{
		{
			name: "spread constraint with no field spreads by cluster, minGroups 1, maxGroups untouched",
			in:   policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{}}},
			want: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByCluster, MinGroups: 1},
			}},
		},
		{
			name: "spreadByLabel is kept and gets no field",
			in:   policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "team", MinGroups: 2, MaxGroups: 3}}},
			want: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "team", MinGroups: 2, MaxGroups: 3}}},
		},
		{
			name: "empty replicaScheduling is Divided/Weighted",
			in:   policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}},
			want: policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.DivisionWeighted)},
		},
		{
			name: "Divided without a preference is Weighted",
			in: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingDivided,
			}},
			want: policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.DivisionWeighted)},
		},
		{
			name: "Duplicated gets no preference",
			in: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingDuplicated,
			}},
			want: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingDuplicated,
			}},
		},
		{
			name: "no replicaScheduling stays absent (Duplicated)",
			in:   policyv1alpha1.Placement{},
			want: policyv1alpha1.Placement{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, withDefaults(tt.in)); diff != "" {
				t.Errorf("withDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithDefaultsDoesNotModifyInput(t *testing.T) {
	in := policyv1alpha1.Placement{
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{},
	}
	withDefaults(in)
	want := policyv1alpha1.Placement{
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{},
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("input modified (-want +got):\n%s", diff)
	}
}

func TestStrategyOf(t *testing.T) {
	tests := []struct {
		name string
		rs   *policyv1alpha1.ReplicaSchedulingStrategy
		want strategy
	}{
		{"no replicaScheduling is duplicated", nil, duplicated},
		{"weighted without weightPreference is static", divided(policyv1alpha1.DivisionWeighted), staticWeight},
		{"weighted with a static list is static", staticRS("a", 1), staticWeight},
		{"weighted with dynamicWeight is dynamic", dynamicRS(), dynamicWeight},
		{"aggregated", divided(policyv1alpha1.DivisionAggregated), aggregated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := strategyOf(policyv1alpha1.Placement{ReplicaScheduling: tt.rs})
			if err != nil || got != tt.want {
				t.Errorf("strategyOf() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

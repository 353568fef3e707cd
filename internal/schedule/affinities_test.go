package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func terms(namesByTerm ...[]string) []policyv1alpha1.ClusterAffinityTerm {
	out := make([]policyv1alpha1.ClusterAffinityTerm, len(namesByTerm))
	for i, names := range namesByTerm {
		out[i] = policyv1alpha1.ClusterAffinityTerm{
			AffinityName:    []string{"primary", "backup", "last"}[i],
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: names},
		}
	}
	return out
}

func TestClusterAffinities(t *testing.T) {
	tests := []struct {
		name         string
		placement    policyv1alpha1.Placement
		clusters     []*clusterv1alpha1.Cluster
		previous     *Previous
		want         []TargetCluster
		wantAffinity string
		wantTried    []string // affinity names of Decision.Terms
		wantErr      string
	}{
		{
			name:         "the first term that fits wins",
			placement:    policyv1alpha1.Placement{ClusterAffinities: terms([]string{"a"}, []string{"b"})},
			clusters:     clusters("a", "b"),
			want:         placed("a", 2),
			wantAffinity: "primary",
			wantTried:    []string{"primary"},
		},
		{
			name:         "falls through to the next term when no cluster fits",
			placement:    policyv1alpha1.Placement{ClusterAffinities: terms([]string{"gone"}, []string{"b"})},
			clusters:     clusters("a", "b"),
			want:         placed("b", 2),
			wantAffinity: "backup",
			wantTried:    []string{"primary", "backup"},
		},
		{
			name: "falls through on a capacity error too",
			placement: policyv1alpha1.Placement{
				ClusterAffinities: terms([]string{"m1"}, []string{"m2"}),
				ReplicaScheduling: dynamicRS(),
			},
			clusters:     freeClusters(1, 10),
			want:         placed("m2", 2),
			wantAffinity: "backup",
			wantTried:    []string{"primary", "backup"},
		},
		{
			name:         "sticks to the observed term even when an earlier one fits again",
			placement:    policyv1alpha1.Placement{ClusterAffinities: terms([]string{"a"}, []string{"b"})},
			clusters:     clusters("a", "b"),
			previous:     &Previous{Clusters: placed("b", 2), AffinityName: "backup"},
			want:         placed("b", 2),
			wantAffinity: "backup",
			wantTried:    []string{"backup"},
		},
		{
			name:         "an unknown observed term starts from the first",
			placement:    policyv1alpha1.Placement{ClusterAffinities: terms([]string{"a"}, []string{"b"})},
			clusters:     clusters("a", "b"),
			previous:     &Previous{AffinityName: "renamed"},
			want:         placed("a", 2),
			wantAffinity: "primary",
			wantTried:    []string{"primary"},
		},
		{
			name:      "all terms failing with no fit first empties the placement",
			placement: policyv1alpha1.Placement{ClusterAffinities: terms([]string{"x"}, []string{"y"})},
			clusters:  clusters("a", "b"),
			wantTried: []string{"primary", "backup"},
			wantErr:   "fit",
		},
		{
			name: "all terms failing with another error first keeps the previous placement",
			placement: policyv1alpha1.Placement{
				ClusterAffinities: terms([]string{"m1"}, []string{"zzz"}),
				ReplicaScheduling: dynamicRS(),
			},
			clusters:  freeClusters(1, 10),
			wantTried: []string{"primary", "backup"},
			wantErr:   "other",
		},
		{
			name:         "a single clusterAffinity records no affinity name",
			placement:    policyv1alpha1.Placement{ClusterAffinity: affinityNames("b")},
			clusters:     clusters("a", "b"),
			previous:     &Previous{AffinityName: "stale"},
			want:         placed("b", 2),
			wantAffinity: "",
			wantTried:    []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, err := Schedule(Input{Template: deployment(2), Placement: tt.placement, Clusters: tt.clusters, Previous: tt.previous})
			if got := errorKind(err); got != tt.wantErr {
				t.Fatalf("Schedule() error kind = %q (%v), want %q", got, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, dec.Clusters, equateEmpty); diff != "" {
				t.Errorf("clusters mismatch (-want +got):\n%s", diff)
			}
			if dec.AffinityName != tt.wantAffinity {
				t.Errorf("AffinityName = %q, want %q", dec.AffinityName, tt.wantAffinity)
			}
			var tried []string
			for i, term := range dec.Terms {
				tried = append(tried, term.AffinityName)
				failed := tt.wantErr != "" || i < len(dec.Terms)-1
				if failed != (term.Err != "") {
					t.Errorf("term %q: Err = %q, want failed=%v", term.AffinityName, term.Err, failed)
				}
			}
			if diff := cmp.Diff(tt.wantTried, tried); diff != "" {
				t.Errorf("terms tried mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

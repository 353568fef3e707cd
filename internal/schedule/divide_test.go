package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

type scheduleCase struct {
	name      string
	template  *unstructured.Unstructured
	placement policyv1alpha1.Placement
	clusters  []*clusterv1alpha1.Cluster
	previous  *Previous
	want      []TargetCluster
	wantErr   string // "", "fit" or "other"
}

func runScheduleCases(t *testing.T, tests []scheduleCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, err := Schedule(Input{Template: tt.template, Placement: tt.placement, Clusters: tt.clusters, Previous: tt.previous})
			if got := errorKind(err); got != tt.wantErr {
				t.Fatalf("Schedule() error kind = %q (%v), want %q", got, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, dec.Clusters, equateEmpty); diff != "" {
				t.Errorf("Schedule() clusters mismatch (-want +got):\n%s\nsteps: %q", diff, dec.Steps)
			}
		})
	}
}

func TestStaticWeights(t *testing.T) {
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	multiple := staticRS("m1", 1, "m2", 1)
	multiple.WeightPreference.StaticWeightList = append([]policyv1alpha1.StaticClusterWeight{
		{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: prod}, Weight: 2},
	}, multiple.WeightPreference.StaticWeightList...)
	runScheduleCases(t, []scheduleCase{
		{
			name:      "3:2:1 with 12 replicas",
			template:  deployment(12),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("m1", 3, "m2", 2, "m3", 1)},
			clusters:  clusters("m1", "m2", "m3"),
			want:      placed("m1", 6, "m2", 4, "m3", 2),
		},
		{
			name:      "3:2:1 with 13 replicas",
			template:  deployment(13),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("m1", 3, "m2", 2, "m3", 1)},
			clusters:  clusters("m1", "m2", "m3"),
			want:      placed("m1", 7, "m2", 4, "m3", 2),
		},
		{
			name:      "3:2:1 with 14 replicas uses Webster remainders",
			template:  deployment(14),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("m1", 3, "m2", 2, "m3", 1)},
			clusters:  clusters("m1", "m2", "m3"),
			want:      placed("m1", 7, "m2", 5, "m3", 2),
		},
		{
			name:      "no weightPreference means equal weights",
			template:  deployment(12),
			placement: policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.DivisionWeighted)},
			clusters:  clusters("m1", "m2", "m3"),
			want:      placed("m1", 4, "m2", 4, "m3", 4),
		},
		{
			name:      "empty replicaScheduling defaults to Divided/Weighted with equal weights",
			template:  deployment(7),
			placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}},
			clusters:  clusters("c", "a", "b"),
			want:      placed("a", 3, "b", 2, "c", 2),
		},
		{
			name:      "us=2 cn=1 with 10 replicas",
			template:  deployment(10),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("us", 2, "cn", 1)},
			clusters:  clusters("cn", "us"),
			want:      placed("cn", 3, "us", 7),
		},
		{
			name:      "a=1 b=2 with 3 replicas",
			template:  deployment(3),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1, "b", 2)},
			clusters:  clusters("a", "b"),
			want:      placed("a", 1, "b", 2),
		},
		{
			name:      "a=1 b=2 scaled down to 2 ignores the previous result",
			template:  deployment(2),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1, "b", 2)},
			clusters:  clusters("a", "b"),
			previous:  previous("a", 1, "b", 2),
			want:      placed("a", 1, "b", 1),
		},
		{
			name:      "equal weights, one replica goes to the first name",
			template:  deployment(1),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1, "b", 1)},
			clusters:  clusters("b", "a"),
			want:      placed("a", 1),
		},
		{
			name:      "equal weights, 5 replicas",
			template:  deployment(5),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1, "b", 1)},
			clusters:  clusters("a", "b"),
			want:      placed("a", 3, "b", 2),
		},
		{
			name:      "a cluster matched by several entries takes the largest weight",
			template:  deployment(3),
			placement: policyv1alpha1.Placement{ReplicaScheduling: multiple},
			clusters:  []*clusterv1alpha1.Cluster{newCluster("m1"), newCluster("m2", withLabels("env", "prod"))},
			want:      placed("m1", 1, "m2", 2),
		},
		{
			name:      "clusters outside the weight list get nothing",
			template:  deployment(4),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1)},
			clusters:  clusters("a", "b"),
			want:      placed("a", 4),
		},
		{
			name:      "no entry matching any cluster means equal weights",
			template:  deployment(4),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("zzz", 3)},
			clusters:  clusters("a", "b"),
			want:      placed("a", 2, "b", 2),
		},
		{
			name:      "static weights ignore capacity",
			template:  deployment(4),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("m1", 1, "m2", 1)},
			clusters:  freeClusters(0, 0),
			want:      placed("m1", 2, "m2", 2),
		},
		{
			name:     "static weights ignore spread constraints",
			template: deployment(4),
			placement: policyv1alpha1.Placement{
				ReplicaScheduling: staticRS("a", 1, "b", 1, "c", 2),
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByCluster, MaxGroups: 1}},
			},
			clusters: clusters("a", "b", "c"),
			want:     placed("a", 1, "b", 1, "c", 2),
		},
	})
}

func TestStaticWeightSteps(t *testing.T) {
	dec, err := Schedule(Input{
		Template:  deployment(10),
		Placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("member1", 2, "member2", 1)},
		Clusters:  clusters("member1", "member2"),
	})
	if err != nil {
		t.Fatalf("Schedule() error: %v", err)
	}
	want := []string{
		"candidates in order: member1 (score 0, available 0), member2 (score 0, available 0)",
		"Divided/Weighted static: weights member1=2 member2=1; 10 replicas → member1=7 member2=3 (Webster)",
	}
	if diff := cmp.Diff(want, dec.Steps); diff != "" {
		t.Errorf("steps mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(dec.Steps, dec.Terms[0].Steps); diff != "" {
		t.Errorf("term steps differ from decision steps (-decision +term):\n%s", diff)
	}
}

func TestDuplicatedAndNonWorkloads(t *testing.T) {
	runScheduleCases(t, []scheduleCase{
		{
			name:     "no replicaScheduling duplicates to every cluster",
			template: deployment(3),
			clusters: clusters("a", "b"),
			want:     placed("a", 3, "b", 3),
		},
		{
			name:     "duplicated ignores capacity",
			template: deployment(3),
			placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingDuplicated,
			}},
			clusters: freeClusters(0, 1),
			want:     placed("m1", 3, "m2", 3),
		},
		{
			name:     "a workload with 0 replicas is dropped everywhere",
			template: loadTemplate(t, "deployment-zero-replicas-requests"),
			clusters: clusters("a", "b"),
			want:     nil,
		},
		{
			name:     "0 replicas and no requirements is a non-workload, kept with 0",
			template: loadTemplate(t, "deployment-zero-replicas"),
			clusters: clusters("a", "b"),
			want:     placed("a", 0, "b", 0),
		},
		{
			name:     "a ConfigMap goes to every candidate with 0 whatever the strategy",
			template: configMap(),
			placement: policyv1alpha1.Placement{
				ClusterAffinity:   affinityNames("a", "b"),
				ReplicaScheduling: dynamicRS(),
			},
			clusters: clusters("a", "b", "c"),
			want:     placed("a", 0, "b", 0),
		},
		{
			name:      "a ConfigMap with static weights still goes to every candidate",
			template:  configMap(),
			placement: policyv1alpha1.Placement{ReplicaScheduling: staticRS("a", 1)},
			clusters:  clusters("a", "b"),
			want:      placed("a", 0, "b", 0),
		},
		{
			name:     "an unknown replicaSchedulingType fails for workloads",
			template: deployment(2),
			placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: "Sideways",
			}},
			clusters: clusters("a"),
			wantErr:  "other",
		},
	})
}

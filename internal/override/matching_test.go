package override

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// labels is a labelsOverrider rule that adds key=value.
func labels(key, value string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
		{Operator: "add", Value: map[string]string{key: value}}}}
}

func TestMatching(t *testing.T) {
	m1, m2 := member("member1", map[string]string{"region": "eu"}), member("member2", nil)
	tests := []struct {
		name     string
		policies []load.Override
		cluster  *clusterv1alpha1.Cluster
		want     []RuleRef
	}{
		{
			name: "rules targeting the cluster, not the others",
			policies: []load.Override{op("p", selecting(deployments("")),
				withRule(nil, replicas("2")), withRule(clusters("member2"), replicas("3")), withRule(clusters("member1"), replicas("4")))},
			cluster: m1,
			want:    []RuleRef{{0, 0}, {0, 2}},
		},
		{
			name:     "a policy that does not select the object matches nothing",
			policies: []load.Override{op("p", selecting(deployments("other")), withRule(nil, replicas("2")))},
			cluster:  m1,
		},
		{
			name:     "an OverridePolicy of another namespace matches nothing",
			policies: []load.Override{op("p", inNamespace("other"), withRule(nil, replicas("2")))},
			cluster:  m1,
		},
		{
			name: "a ClusterOverridePolicy makes every OverridePolicy a candidate: its labels may make one select",
			policies: []load.Override{
				op("p", selecting(labelled("added", "yes")), withRule(nil, replicas("2"))),
				cop("c", withRule(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1LabelSelector}, labels("added", "yes")))},
			cluster: m1,
			want:    []RuleRef{{1, 0}, {0, 0}},
		},
		{
			name:     "the deprecated form is rule 0",
			policies: []load.Override{deprecated("p", clusters("member2"))},
			cluster:  m2,
			want:     []RuleRef{{0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Matching(readObject(t, "deployment.yaml"), tt.cluster, tt.policies)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Matching (-want +got):\n%s", diff)
			}
		})
	}
}

var metav1LabelSelector = *labelled("region", "eu").LabelSelector

func deprecated(name string, target *policyv1alpha1.ClusterAffinity) load.Override {
	p := op(name)
	ov := replicas("5")
	p.Policy.Spec.TargetCluster, p.Policy.Spec.Overriders = target, &ov
	return p
}

// TestMatchingDecidesApply is the contract structural sharing relies on:
// clusters with the same matching rules get the same object and record
// from the same input, and the rules Apply applies are among them.
func TestMatchingDecidesApply(t *testing.T) {
	policies := []load.Override{
		op("p", selecting(labelled("added", "yes")), withRule(clusters("a", "b"), replicas("2"))),
		op("q", withRule(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1LabelSelector}, labels("eu", "true"))),
		cop("c", withRule(clusters("a", "c"), labels("added", "yes"))),
	}
	eu := map[string]string{"region": "eu"}
	members := []*clusterv1alpha1.Cluster{member("a", eu), member("b", eu), member("c", eu), member("d", nil), member("e", nil)}
	byKey := map[string]string{}
	for _, c := range members {
		obj := readObject(t, "deployment.yaml")
		res, err := Apply(obj, c, policies)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal([]any{obj.Object, res})
		if err != nil {
			t.Fatal(err)
		}
		key := cmp.Diff(nil, Matching(readObject(t, "deployment.yaml"), c, policies))
		if prev, seen := byKey[key]; seen && prev != string(out) {
			t.Errorf("cluster %s matches the rules of an earlier cluster but renders differently", c.Name)
		}
		byKey[key] = string(out)
		if len(res.ClusterOverrides)+len(res.Overrides) > len(Matching(readObject(t, "deployment.yaml"), c, policies)) {
			t.Errorf("cluster %s: Apply applied more rules than Matching lists", c.Name)
		}
	}
	if len(byKey) != 4 { // a; b; c; d and e
		t.Errorf("got %d distinct rule sets, want 4", len(byKey))
	}
}

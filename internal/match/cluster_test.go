package match

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestCluster(t *testing.T) {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"a", "b"}},
	}
	noRegion := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m2"}}
	field := func(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}
	}
	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
		cluster  *clusterv1alpha1.Cluster
		want     bool
	}{
		{"nil affinity matches all", nil, c, true},
		{"cluster name listed", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}, c, true},
		{"cluster name not listed", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m9"}}, c, false},
		{"exclude wins over clusterNames", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}, ExcludeClusters: []string{"m1"}}, c, false},
		{"label selector matches", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, c, true},
		{"label selector and names must both match", &policyv1alpha1.ClusterAffinity{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}, ClusterNames: []string{"m1"}}, c, false},
		{"region In", field("region", corev1.NodeSelectorOpIn, "us-east-1"), c, true},
		{"provider NotIn", field("provider", corev1.NodeSelectorOpNotIn, "aws"), c, false},
		{"NotIn matches an empty region", field("region", corev1.NodeSelectorOpNotIn, "us-east-1"), noRegion, true},
		{"zone In overlaps", field("zone", corev1.NodeSelectorOpIn, "b", "c"), c, true},
		{"zone In with no zones", field("zone", corev1.NodeSelectorOpIn, "a"), noRegion, false},
		{"zone NotIn with no zones", field("zone", corev1.NodeSelectorOpNotIn, "a"), noRegion, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cluster(tt.affinity, tt.cluster); got != tt.want {
				t.Errorf("Cluster() = %v, want %v", got, tt.want)
			}
		})
	}
}

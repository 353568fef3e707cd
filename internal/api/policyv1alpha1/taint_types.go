package policyv1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindClusterTaintPolicy is Karmada's cluster-scoped ClusterTaintPolicy.
const KindClusterTaintPolicy = "ClusterTaintPolicy"

// ClusterTaintPolicy taints the clusters it targets while their status
// conditions match addOnConditions, and takes the taints off when they match
// removeOnConditions: how Karmada (v1.14+) turns cluster health into the
// NoSchedule and NoExecute taints that scheduling and failover act on.
type ClusterTaintPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterTaintPolicySpec `json:"spec"`
}

// ClusterTaintPolicySpec is what a ClusterTaintPolicy does.
type ClusterTaintPolicySpec struct {
	// TargetClusters selects the clusters; nil targets every cluster.
	TargetClusters *ClusterAffinity `json:"targetClusters,omitempty"`
	// AddOnConditions are ANDed; an empty list never adds.
	AddOnConditions []MatchCondition `json:"addOnConditions,omitempty"`
	// RemoveOnConditions are ANDed; an empty list never removes.
	RemoveOnConditions []MatchCondition `json:"removeOnConditions,omitempty"`
	Taints             []Taint          `json:"taints"`
}

// MatchCondition tests one status condition of a cluster.
type MatchCondition struct {
	ConditionType string `json:"conditionType"`
	// Operator is In or NotIn.
	Operator     string                   `json:"operator"`
	StatusValues []metav1.ConditionStatus `json:"statusValues"`
}

// Taint is a taint a ClusterTaintPolicy puts on clusters.
type Taint struct {
	Key    string             `json:"key"`
	Value  string             `json:"value,omitempty"`
	Effect corev1.TaintEffect `json:"effect"`
}

// Match condition operators.
const (
	MatchIn    = "In"
	MatchNotIn = "NotIn"
)

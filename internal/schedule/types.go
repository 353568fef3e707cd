// Package schedule decides, for one template and its winning policy, which
// clusters it lands on and how many replicas each gets, with Karmada's
// filter → score → spread → divide pipeline. It is pure: the cluster state and
// the previous placement are inputs, never fetched.
package schedule

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// Input is everything one scheduling decision depends on.
type Input struct {
	// Template is the resource template (replicas and per-replica requests
	// are read from it; its apiVersion/kind drive the API filter).
	Template *unstructured.Unstructured
	// Placement is the winning policy's placement, as written in Git.
	Placement policyv1alpha1.Placement
	// Clusters is every member, sorted by name. A cluster with a nil Status
	// is taken as Ready with every API enabled and unknown capacity.
	Clusters []*clusterv1alpha1.Cluster
	// Previous is the last placement of this template; nil on a first render.
	Previous *Previous
	// Interpreted, when set, is what a ResourceInterpreterCustomization
	// says of the template's replicas; it takes precedence over the
	// built-in rules of Replicas, as in Karmada.
	Interpreted *Interpreted
}

// Interpreted is a template's replicas and per-replica requirements as a
// customization's GetReplicas script returned them.
type Interpreted struct {
	Replicas int32
	Requests corev1.ResourceList
	// NodeClaim is set when the script returned node constraints.
	NodeClaim bool
	// By names the customization and where its script is, for explain.
	By string
}

// Previous is the history Karmada's scheduler depends on.
type Previous struct {
	// Clusters is the previous spec.clusters (name → replicas).
	Clusters []TargetCluster `json:"clusters"`
	// AffinityName is the clusterAffinities term in use.
	AffinityName string `json:"affinityName,omitempty"`
	// EvictedClusters are clusters with a pending graceful eviction; they are
	// filtered out.
	EvictedClusters []string `json:"evictedClusters,omitempty"`
}

// TargetCluster is one cluster of a placement with its replicas (0 for kinds
// without replicas).
type TargetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// Decision is the result of scheduling one template.
type Decision struct {
	// Clusters is the placement, sorted by name.
	Clusters []TargetCluster
	// AffinityName is the clusterAffinities term that succeeded ("" without
	// clusterAffinities).
	AffinityName string
	// Workload is true when the template has replicas or per-replica
	// requirements (Karmada's definition).
	Workload bool
	// Replicas is the template's desired replicas (0 for non-workloads).
	Replicas int32
	// InterpretedBy names the ResourceInterpreterCustomization that read
	// the replicas; "" for the built-in rules.
	InterpretedBy string
	// Terms records, per clusterAffinities term tried (one entry when the
	// policy uses clusterAffinity), why each cluster was kept or filtered.
	Terms []TermTrace
	// Steps is the replica arithmetic in words, for explain.
	Steps []string
}

// TermTrace is what happened while one affinity term was tried.
type TermTrace struct {
	AffinityName string
	// Filtered maps a cluster name to the reason it was filtered out.
	Filtered map[string]string
	// Err is why the term failed; empty when it succeeded.
	Err string
	// Steps is the selection and replica arithmetic of this term, in words.
	Steps []string
}

// Error kinds. A FitError (no cluster fits) empties the placement; any other
// scheduling error keeps the previous placement, as in Karmada.
type Error struct {
	NoClusterFit bool
	Message      string
}

func (e *Error) Error() string { return e.Message }

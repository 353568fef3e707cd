// Package clusterv1alpha1 holds Karmada's cluster.karmada.io/v1alpha1 Cluster
// kind with Karmada's JSON field names.
//
// +kubebuilder:object:generate=true
package clusterv1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the apiVersion of Cluster.
const GroupVersion = Group + "/v1alpha1"

// Group is the API group of the kinds in this package, as messages write
// it (ObjectKey.Display).
const Group = "cluster.karmada.io"

// KindCluster is the Cluster kind name.
const KindCluster = "Cluster"

// Sync modes.
const (
	SyncModePush = "Push"
	SyncModePull = "Pull"
)

// Well-known taint keys Karmada puts on clusters.
const (
	TaintNotReady      = "cluster.karmada.io/not-ready"
	TaintUnreachable   = "cluster.karmada.io/unreachable"
	TaintUnschedulable = "cluster.karmada.io/unschedulable"
)

// Condition types.
const (
	ConditionReady                  = "Ready"
	ConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// Cluster is a member cluster. Its credentials never live in Git: SecretRef
// names a Secret on the hub.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterSpec    `json:"spec"`
	Status            *ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is the declared shape of a member.
type ClusterSpec struct {
	ID                          string                `json:"id,omitempty"`
	SyncMode                    string                `json:"syncMode,omitempty"`
	APIEndpoint                 string                `json:"apiEndpoint,omitempty"`
	SecretRef                   *LocalSecretReference `json:"secretRef,omitempty"`
	ImpersonatorSecretRef       *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`
	InsecureSkipTLSVerification bool                  `json:"insecureSkipTLSVerification,omitempty"`
	ProxyURL                    string                `json:"proxyURL,omitempty"`
	ProxyHeader                 map[string]string     `json:"proxyHeader,omitempty"`
	Provider                    string                `json:"provider,omitempty"`
	Region                      string                `json:"region,omitempty"`
	Zone                        string                `json:"zone,omitempty"`
	Zones                       []string              `json:"zones,omitempty"`
	Taints                      []corev1.Taint        `json:"taints,omitempty"`
	ResourceModels              []ResourceModel       `json:"resourceModels,omitempty"`
}

// LocalSecretReference names a Secret on the hub.
type LocalSecretReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ResourceModel is one grade of Karmada's customized resource modelling.
type ResourceModel struct {
	Grade  uint                 `json:"grade"`
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange bounds one resource inside a grade.
type ResourceModelRange struct {
	Name corev1.ResourceName `json:"name"`
	Min  resource.Quantity   `json:"min"`
	Max  resource.Quantity   `json:"max"`
}

// ClusterStatus is the observed state of a member. In Git it stands for the
// live state; the controller fills it from probes.
type ClusterStatus struct {
	KubernetesVersion string             `json:"kubernetesVersion,omitempty"`
	APIEnablements    []APIEnablement    `json:"apiEnablements,omitempty"`
	Conditions        []metav1.Condition `json:"conditions,omitempty"`
	NodeSummary       *NodeSummary       `json:"nodeSummary,omitempty"`
	ResourceSummary   *ResourceSummary   `json:"resourceSummary,omitempty"`
	RemedyActions     []string           `json:"remedyActions,omitempty"`
}

// APIEnablement lists the resources served for one groupVersion.
type APIEnablement struct {
	GroupVersion string        `json:"groupVersion"`
	Resources    []APIResource `json:"resources,omitempty"`
}

// APIResource is one served resource.
type APIResource struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// NodeSummary counts nodes.
type NodeSummary struct {
	TotalNum int32 `json:"totalNum,omitempty"`
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary is the capacity Karmada's general estimator reads.
type ResourceSummary struct {
	Allocatable          corev1.ResourceList   `json:"allocatable,omitempty"`
	Allocating           corev1.ResourceList   `json:"allocating,omitempty"`
	Allocated            corev1.ResourceList   `json:"allocated,omitempty"`
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling counts nodes of one resource-model grade.
type AllocatableModeling struct {
	Grade uint `json:"grade"`
	Count int  `json:"count"`
}

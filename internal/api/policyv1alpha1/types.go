// Package policyv1alpha1 holds Karmada's policy.karmada.io/v1alpha1 kinds:
// PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and
// ClusterOverridePolicy, with Karmada's JSON field names.
package policyv1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the apiVersion of every kind in this package.
const GroupVersion = Group + "/v1alpha1"

// Group is the API group of the kinds in this package, as messages write
// it (ObjectKey.Display).
const Group = "policy.karmada.io"

// Kind names.
const (
	KindPropagationPolicy        = "PropagationPolicy"
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
	KindOverridePolicy           = "OverridePolicy"
	KindClusterOverridePolicy    = "ClusterOverridePolicy"
)

// PropagationPolicy is Karmada's namespaced PropagationPolicy. The
// cluster-scoped ClusterPropagationPolicy has the same shape.
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PropagationSpec `json:"spec"`
}

// PropagationSpec says which templates a policy selects and where they go.
type PropagationSpec struct {
	ResourceSelectors           []ResourceSelector `json:"resourceSelectors"`
	Association                 bool               `json:"association,omitempty"`
	PropagateDeps               bool               `json:"propagateDeps,omitempty"`
	Placement                   Placement          `json:"placement,omitempty"`
	Priority                    *int32             `json:"priority,omitempty"`
	Preemption                  string             `json:"preemption,omitempty"`
	DependentOverrides          []string           `json:"dependentOverrides,omitempty"`
	SchedulerName               string             `json:"schedulerName,omitempty"`
	Failover                    *FailoverBehavior  `json:"failover,omitempty"`
	ConflictResolution          string             `json:"conflictResolution,omitempty"`
	ActivationPreference        string             `json:"activationPreference,omitempty"`
	Suspension                  *Suspension        `json:"suspension,omitempty"`
	PreserveResourcesOnDeletion *bool              `json:"preserveResourcesOnDeletion,omitempty"`
	SchedulePriority            *SchedulePriority  `json:"schedulePriority,omitempty"`
}

// Conflict resolution values.
const (
	ConflictAbort     = "Abort"
	ConflictOverwrite = "Overwrite"
)

// ResourceSelector selects templates by apiVersion and kind, and optionally
// namespace, name or labels. A name makes the labelSelector irrelevant.
type ResourceSelector struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Placement says which clusters a template may land on and how replicas
// are divided among them.
type Placement struct {
	ClusterAffinity    *ClusterAffinity           `json:"clusterAffinity,omitempty"`
	ClusterAffinities  []ClusterAffinityTerm      `json:"clusterAffinities,omitempty"`
	ClusterTolerations []corev1.Toleration        `json:"clusterTolerations,omitempty"`
	SpreadConstraints  []SpreadConstraint         `json:"spreadConstraints,omitempty"`
	ReplicaScheduling  *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`
	WorkloadAffinity   *WorkloadAffinity          `json:"workloadAffinity,omitempty"`
}

// ClusterAffinity filters clusters by name, labels and fields.
type ClusterAffinity struct {
	LabelSelector   *metav1.LabelSelector `json:"labelSelector,omitempty"`
	FieldSelector   *FieldSelector        `json:"fieldSelector,omitempty"`
	ClusterNames    []string              `json:"clusterNames,omitempty"`
	ExcludeClusters []string              `json:"exclude,omitempty"`
}

// FieldSelector matches the provider, region and zone fields of a Cluster.
type FieldSelector struct {
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Field selector keys.
const (
	FieldProvider = "provider"
	FieldRegion   = "region"
	FieldZone     = "zone"
)

// ClusterAffinityTerm is one named group of clusterAffinities, tried in order.
type ClusterAffinityTerm struct {
	AffinityName       string `json:"affinityName"`
	ClusterAffinity    `json:",inline"`
	OverflowAffinities []OverflowAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowAffinity is a tier of clusters used once the main term is full.
type OverflowAffinity struct {
	AffinityName    string `json:"affinityName"`
	ClusterAffinity `json:",inline"`
}

// SpreadConstraint limits how many groups (clusters, regions, …) are chosen.
type SpreadConstraint struct {
	SpreadByField string `json:"spreadByField,omitempty"`
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	MaxGroups     int    `json:"maxGroups,omitempty"`
	MinGroups     int    `json:"minGroups,omitempty"`
}

// Spread fields.
const (
	SpreadByCluster  = "cluster"
	SpreadByRegion   = "region"
	SpreadByZone     = "zone"
	SpreadByProvider = "provider"
)

// ReplicaSchedulingStrategy says whether replicas are duplicated or divided.
type ReplicaSchedulingStrategy struct {
	ReplicaSchedulingType     string              `json:"replicaSchedulingType,omitempty"`
	ReplicaDivisionPreference string              `json:"replicaDivisionPreference,omitempty"`
	WeightPreference          *ClusterPreferences `json:"weightPreference,omitempty"`
}

// Replica scheduling values.
const (
	ReplicaSchedulingDuplicated = "Duplicated"
	ReplicaSchedulingDivided    = "Divided"
	DivisionAggregated          = "Aggregated"
	DivisionWeighted            = "Weighted"
	DynamicWeightAvailable      = "AvailableReplicas"
)

// ClusterPreferences holds static weights or a dynamic weight factor.
type ClusterPreferences struct {
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	DynamicWeight    string                `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight gives every cluster matching TargetCluster a weight.
type StaticClusterWeight struct {
	TargetCluster ClusterAffinity `json:"targetCluster"`
	Weight        int64           `json:"weight"`
}

// WorkloadAffinity is Karmada's alpha workload (anti-)affinity; accepted, not
// acted upon (the feature gate is off by default in Karmada too).
type WorkloadAffinity struct {
	Affinity     *WorkloadAffinityTerm `json:"affinity,omitempty"`
	AntiAffinity *WorkloadAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm groups workloads by a label key.
type WorkloadAffinityTerm struct {
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// FailoverBehavior holds application and cluster failover settings.
type FailoverBehavior struct {
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`
	Cluster     *ClusterFailoverBehavior     `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior says when and how an unhealthy app moves.
type ApplicationFailoverBehavior struct {
	DecisionConditions DecisionConditions `json:"decisionConditions,omitempty"`
	PurgeMode          string             `json:"purgeMode,omitempty"`
	GracePeriodSeconds *int32             `json:"gracePeriodSeconds,omitempty"`
	StatePreservation  *StatePreservation `json:"statePreservation,omitempty"`
}

// ClusterFailoverBehavior says how an app leaves a failed cluster.
type ClusterFailoverBehavior struct {
	PurgeMode         string             `json:"purgeMode,omitempty"`
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions holds the failover toleration time.
type DecisionConditions struct {
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// StatePreservation carries state from the old to the new cluster.
type StatePreservation struct {
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule copies a JSONPath value into a label.
type StatePreservationRule struct {
	AliasLabelName string `json:"aliasLabelName"`
	JSONPath       string `json:"jsonPath"`
}

// Purge modes. The older names are accepted from migrated YAML.
const (
	PurgeDirectly    = "Directly"
	PurgeGracefully  = "Gracefully"
	PurgeNever       = "Never"
	PurgeImmediately = "Immediately"
	PurgeGraciously  = "Graciously"
)

// Suspension pauses dispatching to all or some clusters.
type Suspension struct {
	Dispatching           *bool            `json:"dispatching,omitempty"`
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names the clusters dispatching is paused on.
type SuspendClusters struct {
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SchedulePriority orders Karmada's scheduling queue; accepted, no effect.
type SchedulePriority struct {
	PriorityClassSource string `json:"priorityClassSource,omitempty"`
	PriorityClassName   string `json:"priorityClassName"`
}

// OverridePolicy is Karmada's namespaced OverridePolicy. The cluster-scoped
// ClusterOverridePolicy has the same shape.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              OverrideSpec `json:"spec"`
}

// OverrideSpec selects templates and lists per-cluster override rules.
// TargetCluster and Overriders are the deprecated single-rule form, used only
// when OverrideRules is empty.
type OverrideSpec struct {
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`
	OverrideRules     []RuleWithCluster  `json:"overrideRules,omitempty"`
	TargetCluster     *ClusterAffinity   `json:"targetCluster,omitempty"`
	Overriders        *Overriders        `json:"overriders,omitempty"`
}

// RuleWithCluster applies Overriders to clusters matching TargetCluster (nil:
// every cluster).
type RuleWithCluster struct {
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	Overriders    Overriders       `json:"overriders"`
}

// Overriders are the edits of one rule, applied in Karmada's fixed order:
// image, command, args, labels, annotations, field, plaintext.
type Overriders struct {
	Plaintext            []PlaintextOverrider       `json:"plaintext,omitempty"`
	ImageOverrider       []ImageOverrider           `json:"imageOverrider,omitempty"`
	CommandOverrider     []CommandArgsOverrider     `json:"commandOverrider,omitempty"`
	ArgsOverrider        []CommandArgsOverrider     `json:"argsOverrider,omitempty"`
	LabelsOverrider      []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	FieldOverrider       []FieldOverrider           `json:"fieldOverrider,omitempty"`
}

// Override operators.
const (
	OpAdd     = "add"
	OpRemove  = "remove"
	OpReplace = "replace"
)

// PlaintextOverrider is one RFC 6902 operation.
type PlaintextOverrider struct {
	Path     string                `json:"path"`
	Operator string                `json:"operator"`
	Value    *apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageOverrider edits one component of container images.
type ImageOverrider struct {
	Predicate *ImagePredicate `json:"predicate,omitempty"`
	Component string          `json:"component"`
	Operator  string          `json:"operator"`
	Value     string          `json:"value,omitempty"`
}

// Image components.
const (
	ImageRegistry   = "Registry"
	ImageRepository = "Repository"
	ImageTag        = "Tag"
)

// ImagePredicate names the exact image field to edit.
type ImagePredicate struct {
	Path string `json:"path"`
}

// CommandArgsOverrider adds or removes command or args entries of one container.
type CommandArgsOverrider struct {
	ContainerName string   `json:"containerName"`
	Operator      string   `json:"operator"`
	Value         []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider edits metadata.labels or metadata.annotations.
type LabelAnnotationOverrider struct {
	Operator string            `json:"operator"`
	Value    map[string]string `json:"value,omitempty"`
}

// FieldOverrider patches JSON or YAML held in a string field.
type FieldOverrider struct {
	FieldPath string        `json:"fieldPath"`
	JSON      []JSONPatchOp `json:"json,omitempty"`
	YAML      []YAMLPatchOp `json:"yaml,omitempty"`
}

// JSONPatchOp is one operation inside a JSON string field.
type JSONPatchOp struct {
	SubPath  string                `json:"subPath"`
	Operator string                `json:"operator"`
	Value    *apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOp is one operation inside a YAML string field.
type YAMLPatchOp struct {
	SubPath  string                `json:"subPath"`
	Operator string                `json:"operator"`
	Value    *apiextensionsv1.JSON `json:"value,omitempty"`
}

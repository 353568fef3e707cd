package workv1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// GroupVersion is propagit.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "propagit.io", Version: "v1alpha1"}

// FormatVersion is the Work format this build writes and understands. An
// agent that meets a newer format stops applying that Work and says so.
const FormatVersion = 1

// Work is what one member cluster must run, rendered from one source
// revision.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.spec.sourceRevision`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.appliedRevision`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkSpec   `json:"spec"`
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec holds the final manifests of one cluster.
type WorkSpec struct {
	// Cluster is the member cluster name.
	Cluster string `json:"cluster"`
	// FormatVersion is the Work format; see FormatVersion.
	FormatVersion int `json:"formatVersion"`
	// SourceRevision is the Git commit the manifests were rendered from.
	SourceRevision string `json:"sourceRevision"`
	// SyncMode is how the cluster is delivered: Push (the controller
	// applies) or Pull (an agent in the member applies).
	// +optional
	SyncMode string `json:"syncMode,omitempty"`
	// Suspended pauses applying: the member is not touched.
	// +optional
	Suspended bool `json:"suspended,omitempty"`
	// Manifests are the objects, in final form, sorted by namespace, kind,
	// group and name.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Manifests []runtime.RawExtension `json:"manifests,omitempty"`
}

// WorkStatus is what the applier (controller or agent) observed.
type WorkStatus struct {
	// AppliedRevision is the SourceRevision last applied completely.
	// +optional
	AppliedRevision string `json:"appliedRevision,omitempty"`
	// AppliedDigest is the digest of the manifests last applied completely;
	// an unchanged Work is not re-applied, even after a restart.
	// +optional
	AppliedDigest string `json:"appliedDigest,omitempty"`
	// Conditions: Applied, Healthy, Ready.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Inventory is every object propagit applied to the member and still
	// owns; objects that leave the Work are pruned from it.
	// +optional
	Inventory []ObjectRef `json:"inventory,omitempty"`
	// Objects holds the last result per object.
	// +optional
	Objects []ObjectResult `json:"objects,omitempty"`
	// Drift lists recent changes made on the member outside propagit.
	// +optional
	Drift []DriftRecord `json:"drift,omitempty"`
	// Packed holds Inventory and Objects gzip-compressed, in place of
	// both, when they would make the record too large for one object (a
	// member with thousands of objects). The Work stores pack and unpack
	// it: what they return never has it set.
	// +optional
	Packed []byte `json:"packed,omitempty"`
	// Heartbeat is when the applier last reported (pull agents).
	// +optional
	Heartbeat *metav1.Time `json:"heartbeat,omitempty"`
	// Cluster is the member's own state as a pull agent measured it
	// (readiness, resourceSummary, served APIs); the controller feeds it to
	// the scheduler like a push probe.
	// +optional
	Cluster *clusterv1alpha1.ClusterStatus `json:"cluster,omitempty"`
	// AgentVersion is the version of the applier that wrote this status.
	// +optional
	AgentVersion string `json:"agentVersion,omitempty"`
	// Message explains the Ready condition in one line (for example
	// "agent too old for Work format 2").
	// +optional
	Message string `json:"message,omitempty"`
}

// ObjectResult is the outcome of applying one object.
type ObjectResult struct {
	ObjectRef `json:",inline"`
	// Action: Created, Configured, Unchanged, Pruned, Failed, Skipped,
	// Drifted.
	Action Action `json:"action"`
	// Health from kstatus: Current, InProgress, Failed, NotFound, Unknown.
	// +optional
	Health Health `json:"health,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Status is the object's status as the member reports it, reflected as
	// Karmada's interpreter does: what a ResourceInterpreterCustomization's
	// statusReflection returns, or the replica counts of a built-in
	// workload; at most MaxReflectedStatus bytes, absent for other kinds.
	// Failover's statePreservation reads it.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Status *runtime.RawExtension `json:"status,omitempty"`
}

// MaxReflectedStatus bounds ObjectResult.Status, so a member's status
// record stays small however large its objects' statuses are.
const MaxReflectedStatus = 2048

// DriftRecord is one change made on a member outside propagit.
type DriftRecord struct {
	ObjectRef `json:",inline"`
	// Fields that differ from the Work, as JSON paths.
	// +optional
	Fields []string `json:"fields,omitempty"`
	// Manager is the field manager that made the change.
	// +optional
	Manager string `json:"manager,omitempty"`
	// Deleted: the object was deleted on the member.
	// +optional
	Deleted bool `json:"deleted,omitempty"`
	// Action: Corrected, Recreated (after a deletion) or Reported (the
	// warn mode: not corrected).
	Action DriftAction `json:"action"`
	Time   metav1.Time `json:"time"`
}

// WorkList is a list of Works.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}

// SchemeBuilder registers the types.
var (
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Work{}, &WorkList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

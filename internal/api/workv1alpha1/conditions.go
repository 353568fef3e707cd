package workv1alpha1

// Condition types of a Work status.
const (
	// ConditionApplied: the Work's manifests were applied completely.
	ConditionApplied = "Applied"
	// ConditionHealthy: every applied object is healthy (kstatus Current).
	ConditionHealthy = "Healthy"
	// ConditionReady: applied and healthy; the summary people read.
	ConditionReady = "Ready"
)

// Reasons of the Work conditions, as `propagit status` and alerts read
// them.
const (
	ReasonApplied        = "Applied"
	ReasonApplyFailed    = "ApplyFailed"
	ReasonInvalidWork    = "InvalidWork"
	ReasonHealthy        = "Healthy"
	ReasonHealthUnknown  = "HealthUnknown"
	ReasonProgressing    = "Progressing"
	ReasonReady          = "Ready"
	ReasonFormatTooNew   = "FormatTooNew"
	ReasonSuspended      = "Suspended"
	ReasonMemberNotReady = "MemberNotReady"
	ReasonNoClient       = "NoClient"
)

// Reasons of a member's Ready condition as propagit observes it (the
// cluster status fed to the scheduler).
const (
	ReasonClientError        = "ClientError"
	ReasonClusterUnreachable = "ClusterUnreachable"
	ReasonNoCredentials      = "NoCredentials"
	// ReasonCredentialMismatch: the Cluster in Git asks for a credential,
	// endpoint, TLS or proxy setting its bound credential Secret does not
	// grant, so the member is not contacted.
	ReasonCredentialMismatch  = "CredentialMismatch"
	ReasonAgentHeartbeatStale = "AgentHeartbeatStale"
	ReasonClusterReady        = "ClusterReady"
	ReasonClusterNotReady     = "ClusterNotReady"
	ReasonProbed              = "Probed"
)

// Reasons of the Kubernetes Events recorded on Works.
const (
	EventApplied        = "Applied"
	EventApplyFailed    = "ApplyFailed"
	EventDriftCorrected = "DriftCorrected"
	EventDriftReported  = "DriftReported"
	EventFailover       = "Failover"
	EventRenderFailed   = "RenderFailed"
	EventScheduleFailed = "ScheduleFailed"
	EventPruneHeld      = "PruneHeld"
)

// Action is what applying did to one object.
type Action string

// Actions reported in ObjectResult.Action.
const (
	ActionCreated    Action = "Created"
	ActionConfigured Action = "Configured"
	ActionUnchanged  Action = "Unchanged"
	ActionPruned     Action = "Pruned"
	ActionFailed     Action = "Failed"
	ActionSkipped    Action = "Skipped"
	// ActionReleased: the object left the Work but asked to be kept
	// (preserveResourcesOnDeletion, propagit.io/prune: disabled); it stays
	// on the member without propagit's labels and annotations, unmanaged.
	ActionReleased Action = "Released"
	// ActionDrifted: the object differs on the member and its drift mode
	// (warn) says to report it only.
	ActionDrifted Action = "Drifted"
)

// Health is an object's health on its member. The first four are kstatus
// statuses.
type Health string

// Health values reported in ObjectResult.Health.
const (
	HealthCurrent    Health = "Current"
	HealthInProgress Health = "InProgress"
	HealthFailed     Health = "Failed"
	HealthNotFound   Health = "NotFound"
	HealthUnknown    Health = "Unknown"
)

// DriftAction is what propagit did about one drift.
type DriftAction string

// Drift actions reported in DriftRecord.Action.
const (
	DriftCorrected DriftAction = "Corrected"
	DriftRecreated DriftAction = "Recreated"
	DriftReported  DriftAction = "Reported"
)

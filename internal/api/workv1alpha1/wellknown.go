package workv1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The wire vocabulary: every label and annotation propagit writes or reads
// on the objects it renders and applies, and on Works. Declared once here,
// the one package every stage may import, so the renderer that stamps a key
// and the applier that reads it can never disagree. Karmada's keys are kept
// under Karmada's names so tools that read them keep working.
const (
	// LabelManaged marks an object propagit created. Only objects that still
	// carry it are ever pruned, and an existing object without it is a
	// conflict.
	LabelManaged = "propagit.io/managed"
	// LabelOwner names the propagit installation (the controller's
	// --name) that applied an object. Inventory and prune act only on
	// objects with their own installation's name, so two installations
	// sharing a member neither adopt nor delete each other's objects.
	LabelOwner = "propagit.io/owner"
	// LabelCluster names the member a Work custom resource belongs to.
	LabelCluster = "propagit.io/cluster"
	// LabelChunkOf marks a Work custom resource that holds a part of the
	// manifests of the named cluster's Work (AnnotationChunks): a member's
	// Work larger than one object may be is split.
	LabelChunkOf = "propagit.io/chunk-of"
	// LabelJoinedBy marks the objects `propagit join` created in a member.
	LabelJoinedBy = "propagit.io/joined-by"
	// LabelCredentialsFor, on a hub Secret in the credentials namespace,
	// names the one member whose credential the Secret holds. A Cluster in
	// Git reaches only the Secret labelled with its own name.
	LabelCredentialsFor = "propagit.io/credentials-for"

	// AnnotationTemplate names the source template of an object
	// (ObjectKey.String()).
	AnnotationTemplate = "propagit.io/template"

	// AnnotationHelmChart names the HelmChart ("namespace/name") whose
	// chart rendered an object; AnnotationHelmTemplate the chart file
	// that did ("web/templates/deployment.yaml").
	AnnotationHelmChart    = "propagit.io/helm-chart"
	AnnotationHelmTemplate = "propagit.io/helm-template"
	// AnnotationScheduledReplicas records the replicas the scheduler gave a
	// cluster before overrides; it is the "previous placement" of the next
	// render.
	AnnotationScheduledReplicas = "propagit.io/scheduled-replicas"
	// AnnotationAffinityName records the clusterAffinities term in use.
	AnnotationAffinityName = "propagit.io/affinity-name"
	// AnnotationDependencyOf names the templates that pulled in a dependency
	// (propagateDeps), comma-separated.
	AnnotationDependencyOf = "propagit.io/dependency-of"
	// AnnotationDrift on a template or its policy chooses what happens when
	// the object is changed on a member: correct (default), warn, ignore.
	// The template's choice wins.
	AnnotationDrift = "propagit.io/drift"
	// AnnotationAppliedDigest is the digest of what propagit last applied,
	// set on the live object so drift is told from a new Work.
	AnnotationAppliedDigest = "propagit.io/applied-digest"

	// AnnotationSOPSDocument holds, on an object loaded from a SOPS-encrypted
	// document, that document as committed (still encrypted): its MAC covers
	// the original order and values, which render's overrides and stamps
	// change. The decrypting apply verifies and reads it, then removes it.
	AnnotationSOPSDocument = "propagit.io/sops-document"
	// AnnotationAgeRecipient, on a Cluster, lists (comma-separated) the age
	// recipients whose identities the member decrypts with; lint checks
	// that each encrypted object sent there is encrypted to one of them.
	AnnotationAgeRecipient = "propagit.io/age-recipient"

	// AnnotationEvictedAt, AnnotationEvictedUntil, AnnotationEvictedReason
	// and AnnotationPurgeMode mark an old copy kept on a cluster the
	// template was moved off; they persist the eviction across renders and
	// restarts.
	AnnotationEvictedAt     = "propagit.io/evicted-at"
	AnnotationEvictedUntil  = "propagit.io/evicted-until"
	AnnotationEvictedReason = "propagit.io/evicted-reason"
	// AnnotationPreservedLabels, on a copy placed by failover, lists the
	// labels (comma-separated keys) that statePreservation copied from the
	// evicted cluster's status; later renders keep them on that cluster.
	AnnotationPreservedLabels = "propagit.io/preserved-labels"
	AnnotationPurgeMode       = "propagit.io/purge-mode"

	// AnnotationClusterReady, on a Work, is the cluster's Ready condition
	// status as the render that produced the Work saw it: True, False or
	// Unknown. `propagit status` shows why a cluster receives nothing, or
	// lost an application, without the controller at hand (Karmada shows
	// the same on the Cluster object).
	AnnotationClusterReady = "propagit.io/cluster-ready"
	// AnnotationClusterTaints, on a Work, lists the cluster's taints,
	// comma-separated, each as kubectl writes it: key[=value]:Effect.
	AnnotationClusterTaints = "propagit.io/cluster-taints"

	// AnnotationRecordedSequence numbers the Put that last wrote a Work
	// custom resource, so the newest of the revisions the Works carry is
	// known.
	AnnotationRecordedSequence = "propagit.io/recorded-sequence"

	// AnnotationPruneHeld, on a Work, says that the newest revision would
	// delete more of the member than the prune guard allows, so the Work
	// holds the previous revision; its value is the reason.
	AnnotationPruneHeld = "propagit.io/prune-held"

	// AnnotationPrune on a template set to PruneDisabled keeps its objects
	// on the members when the template is removed from Git (Flux's
	// kustomize.toolkit.fluxcd.io/prune: disabled habit): they are left
	// there, no longer managed, instead of being deleted.
	AnnotationPrune = "propagit.io/prune"
	// AnnotationPreserveResourcesOnDeletion is set to "true" on every
	// object whose policy says preserveResourcesOnDeletion: true, so that
	// the choice is still known once the policy or the template is gone:
	// removing the template then leaves the objects on the members, no
	// longer managed (Karmada §10.4).
	AnnotationPreserveResourcesOnDeletion = "propagit.io/preserve-resources-on-deletion"

	// AnnotationRenderErrors, on a Work, lists the templates that failed to
	// render for its cluster, one per line ("Template on cluster: policy
	// rule overrider: path: message"); each keeps what the cluster ran.
	AnnotationRenderErrors = "propagit.io/render-errors"

	// AnnotationHelmHooks, on a Work, lists the Helm hooks of the charts
	// rendered for its cluster, which propagit does not apply, one a line.
	AnnotationHelmHooks = "propagit.io/helm-hooks"
	// AnnotationRolloutHeld on a Work says, one line per RolloutPolicy,
	// which revision of the policy's templates the cluster does not have
	// yet and why (its wave has not opened, the rollout halted or rolled
	// back), and what it runs instead.
	AnnotationRolloutHeld = "propagit.io/rollout-held"
	// AnnotationUnclaimed, on a Work, lists the templates (ObjectKey
	// strings, comma-separated) that no policy claims any more and that
	// keep their last placement and content on the cluster.
	AnnotationUnclaimed = "propagit.io/unclaimed"
	// AnnotationScheduleErrors, on every Work, lists the templates the
	// scheduler could not place, one per line ("Template: reason"), with
	// whether they keep their previous placement. They are fleet-wide, so
	// every Work carries the same list: a template placed nowhere has no
	// Work of its own to say why.
	AnnotationScheduleErrors = "propagit.io/schedule-errors"

	// AnnotationChunks, on a Work custom resource, is how many Works its
	// manifests are split into (itself first, then <cluster>-part-<i>);
	// AnnotationChunk is a part's index, and AnnotationManifestsDigest,
	// on all of them, the Digest of the whole, so a reader never mixes
	// parts of two writes.
	AnnotationChunks          = "propagit.io/chunks"
	AnnotationChunk           = "propagit.io/chunk"
	AnnotationManifestsDigest = "propagit.io/manifests-digest"

	// AnnotationPrefix is the prefix of propagit's own annotations: a Work
	// store records those with a Work, never what other tools set.
	AnnotationPrefix = "propagit.io/"
)

// Karmada's keys, read and written as Karmada does.
const (
	AnnotationPPName      = "propagationpolicy.karmada.io/name"
	AnnotationPPNamespace = "propagationpolicy.karmada.io/namespace"
	AnnotationCPPName     = "clusterpropagationpolicy.karmada.io/name"
	// AnnotationConflict is Karmada's conflict-resolution annotation:
	// ConflictOverwrite takes over an object propagit did not create,
	// anything else (or none) refuses to.
	AnnotationConflict = "work.karmada.io/conflict-resolution"
	// LabelRetainReplicas keeps spec.replicas as the member has it (an HPA
	// owns it), as Karmada's label of the same name does.
	LabelRetainReplicas = "resourcetemplate.karmada.io/retain-replicas"
	// LabelSkipAutoPropagation on a Namespace stops its auto-propagation.
	LabelSkipAutoPropagation = "namespace.karmada.io/skip-auto-propagation"
)

// Drift modes, the values of AnnotationDrift: correct (the default)
// re-applies an object changed on the member, warn reports the drift and
// leaves the member as it is, ignore never looks. Changes that come from
// Git are applied in every mode.
const (
	DriftModeCorrect = "correct"
	DriftModeWarn    = "warn"
	DriftModeIgnore  = "ignore"
)

// PruneDisabled is the value of AnnotationPrune that keeps a removed
// template's objects on the members.
const PruneDisabled = "disabled"

// Values of AnnotationConflict.
const (
	ConflictOverwrite = "overwrite"
	ConflictAbort     = "abort"
)

// MemberNamespacePrefix starts the hub namespace of each member's Work
// custom resource, as Karmada's karmada-es-<cluster>: one namespace per
// member, so RBAC can give each pull agent its own Work and nothing else.
const MemberNamespacePrefix = "propagit-member-"

// MemberNamespace returns the hub namespace holding cluster's Work. cluster
// must be a DNS label short enough for the prefixed name to be one too (47
// characters at most), so no name can reach another member's namespace.
func MemberNamespace(cluster string) (string, error) {
	if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
		return "", fmt.Errorf("invalid cluster name %q: %s", cluster, errs[0])
	}
	ns := MemberNamespacePrefix + cluster
	if len(ns) > validation.DNS1123LabelMaxLength {
		return "", fmt.Errorf("invalid cluster name %q: at most %d characters, so that namespace %s… is a DNS label",
			cluster, validation.DNS1123LabelMaxLength-len(MemberNamespacePrefix), MemberNamespacePrefix)
	}
	return ns, nil
}

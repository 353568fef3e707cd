package diff

import "github.com/propagit/propagit/internal/api/workv1alpha1"

// Ref names an object the way workv1alpha1.ObjectKey does, without its String method
// (which, promoted, would make every report type print as a bare key).
type Ref struct {
	// Group is the API group, "core" for the core group.
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Namespace is "" for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func refOf(k workv1alpha1.ObjectKey) Ref {
	return Ref{Group: k.GroupName(), Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

// Key returns the workv1alpha1.ObjectKey of r.
func (r Ref) Key() workv1alpha1.ObjectKey {
	group := r.Group
	if group == "core" {
		group = ""
	}
	return workv1alpha1.ObjectKey{Group: group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// SchemaVersion names the shape of the JSON report; it changes only when a
// field is removed or changes meaning.
const SchemaVersion = "propagit.io/diff/v1"

// Revision names the revision one side was rendered from.
type Revision struct {
	// Name is the revision as the user gave it ("main", "HEAD~1", ".").
	Name string `json:"name"`
	// Hash is the full commit hash; for the working tree, the commit HEAD
	// points at ("" when unknown).
	Hash string `json:"hash,omitempty"`
	// WorkingTree is true when the side was read from disk, uncommitted
	// changes included.
	WorkingTree bool `json:"workingTree,omitempty"`
}

// Change is what happened to an object on one cluster.
type Change string

// The changes an object can undergo.
const (
	Added   Change = "added"
	Changed Change = "changed"
	Removed Change = "removed"
)

// Report is the difference between two renders. It is also the JSON schema
// of `propagit diff -o json`: every list is present (possibly empty) and
// sorted as documented on its field.
type Report struct {
	// SchemaVersion is the constant SchemaVersion.
	SchemaVersion string   `json:"schemaVersion"`
	Base          Revision `json:"base"`
	Head          Revision `json:"head"`
	// Differs is true when any cluster receives anything different.
	Differs bool `json:"differs"`
	// Clusters are the clusters with at least one difference, by name.
	Clusters []Cluster `json:"clusters"`
	// UnchangedClusters counts the clusters that receive objects on either
	// side and see no difference.
	UnchangedClusters int `json:"unchangedClusters"`
	// Moves are objects that leave one cluster and arrive on another, by
	// object then source cluster.
	Moves []Move `json:"moves"`
	// Deletions are objects removed from clusters and not moved elsewhere,
	// by object.
	Deletions []Deletion `json:"deletions"`
	// Warnings are the head render's problems (a template that could not be
	// scheduled), by template and cluster.
	Warnings []Warning `json:"warnings"`
	// RenderErrors are the (template, cluster) pairs that fail to render
	// at head, by template and cluster: each cluster keeps its current
	// objects, nothing is deleted. Any makes the diff exit 2.
	RenderErrors []RenderError `json:"renderErrors"`
	// Unclaimed are the templates no policy selects at head that keep
	// running where they were, by template.
	Unclaimed []Unclaimed `json:"unclaimed"`
	// PruneHolds are the clusters where the controller's prune guard will
	// hold the change (it deletes too much of them), by cluster.
	PruneHolds []PruneHold `json:"pruneHolds"`
	// Waves are, per RolloutPolicy at head whose templates the change
	// touches, the clusters it reaches wave by wave, by policy.
	Waves []WavePlan `json:"waves"`
	// Orphaned are the objects of templates removed at head that stay on
	// their clusters, no longer managed, by object. They are not
	// deletions.
	Orphaned []Orphaned `json:"orphaned"`
	// Signatures is, with diff --trusted-keys, whether the head's commits
	// are signed as the controller's --verify-commits requires; absent
	// without --trusted-keys.
	Signatures *Signatures `json:"signatures,omitempty"`
}

// Signatures is the verdict on the head's commit signatures, in the words
// of `propagit verify -o json`.
type Signatures struct {
	// Mode is "tip" (the head commit is checked) or "all" (every commit
	// from the base to the head).
	Mode string `json:"mode"`
	// Checked is false when the commits could not be checked (the head is
	// the working tree, or a commit is missing from a shallow clone);
	// Error then says why.
	Checked bool `json:"checked"`
	// Verified is true when every commit checked verifies: the controller
	// will accept the head.
	Verified bool `json:"verified"`
	// Error is why the head does not verify, or was not checked; "" when
	// it verifies.
	Error string `json:"error,omitempty"`
	// Commits are the commits checked, newest first, each with who signed
	// it or why it does not verify; empty when none was checked.
	Commits []SignedCommit `json:"commits"`
}

// SignedCommit is the verdict on one commit.
type SignedCommit struct {
	// Commit is the full hash.
	Commit string `json:"commit"`
	// Method is "ssh" or "openpgp"; "" when the commit is not signed.
	Method string `json:"method,omitempty"`
	// Key is the signing key's fingerprint, when the signature names one.
	Key string `json:"key,omitempty"`
	// Signer is who the trusted key belongs to.
	Signer string `json:"signer,omitempty"`
	// Reason is "" when the commit verifies, else why, as a word
	// ("Unsigned", "UntrustedKey", …), and Message in words.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Cluster is the difference on one member cluster.
type Cluster struct {
	Name    string `json:"name"`
	Added   int    `json:"added"`
	Changed int    `json:"changed"`
	Removed int    `json:"removed"`
	// Replicas sums the workload replicas the cluster runs before and after;
	// nil when neither side has a workload there.
	Replicas *Replicas `json:"replicas"`
	// Objects are the objects that differ, by namespace, kind, group, name.
	Objects []Object `json:"objects"`
}

// Replicas is a replica count before and after the change.
type Replicas struct {
	Before int64 `json:"before"`
	After  int64 `json:"after"`
}

// Object is one object that differs on one cluster.
type Object struct {
	Ref
	// Template names the template the object was rendered from.
	Template string `json:"template,omitempty"`
	Change   Change `json:"change"`
	// MovedFrom is set on an added object that was removed from that
	// cluster; MovedTo on the removed object it came from.
	MovedFrom string `json:"movedFrom,omitempty"`
	MovedTo   string `json:"movedTo,omitempty"`
	// Diff is the unified diff of the final manifests, Secret values
	// redacted. A moved object's diff is on the cluster it arrives on and
	// compares it with the object on the cluster it left; it is empty when
	// the object arrives identical, and on the removed half of a move.
	Diff string `json:"diff,omitempty"`
	// Sealed describes a SOPS-encrypted object's change from its
	// ciphertexts and MAC, without decrypting: "encrypted Secret/demo/db
	// changed (keys: password)"; empty for other objects.
	Sealed string `json:"sealed,omitempty"`
}

// Move is an object that leaves one cluster and arrives on another.
type Move struct {
	Ref
	From string `json:"from"`
	To   string `json:"to"`
}

// Deletion is an object removed from clusters and not moved elsewhere.
type Deletion struct {
	Ref
	// Clusters are the clusters it is deleted from, by name.
	Clusters []string `json:"clusters"`
}

// Warning is a problem of the head render.
type Warning struct {
	// Source is "path:line" of the template, relative to the repository.
	Source   string `json:"source"`
	Template string `json:"template"`
	// Cluster is the cluster the template was not rendered for; "" when it
	// failed to schedule.
	Cluster string `json:"cluster,omitempty"`
	Message string `json:"message"`
}

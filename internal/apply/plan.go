package apply

import (
	"fmt"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// fmtRef names r the one way messages name an object (ObjectKey.Display:
// Kind.group/namespace/name), the prefix of every message about it; status
// and wait print these messages as they are.
func fmtRef(r workv1alpha1.ObjectRef) string {
	return r.Display()
}

// item is one desired object and what happened to it. Each item is written
// by one goroutine only.
type item struct {
	obj *unstructured.Unstructured
	ref workv1alpha1.ObjectRef
	// owned: the object is in the previous inventory, under prev.
	owned bool
	prev  workv1alpha1.ObjectRef
	// live is the member's copy, nil when absent; liveErr is set when it
	// could not be read; read says readLive got an answer either way.
	live    *unstructured.Unstructured
	liveErr error
	read    bool
	// done: action and message are final; the item is not applied.
	done    bool
	action  workv1alpha1.Action
	message string
	// drift is set when the member differed from content propagit applied
	// before.
	drift *Drift
	// encrypted: the desired object came SOPS-encrypted, so once decrypt
	// ran it holds decrypted values (no script sees it, no apiserver
	// message about it is kept).
	encrypted bool
}

func (it *item) fail(format string, args ...any) {
	it.done = true
	it.action = workv1alpha1.ActionFailed
	it.message = fmtRef(it.ref) + " " + fmt.Sprintf(format, args...)
}

func (it *item) set(action workv1alpha1.Action) {
	it.done = true
	it.action = action
}

// plan is what one Apply, ApplyChanges or Check call works on.
type plan struct {
	items []*item
	// stale are the inventory entries to prune, in inventory order.
	stale []workv1alpha1.ObjectRef
	// kept are inventory entries this call leaves alone (ApplyChanges and
	// Check touch part of the inventory); they stay in it.
	kept []workv1alpha1.ObjectRef
	// check: every item was applied with this content before (a drift
	// check), so a missing object was deleted on the member.
	check bool
}

// newPlan pairs desired objects with the inventory. Objects without a kind,
// version or name, and second copies of an object, fail at once; the others
// are copied and stamped with the managed label and their digest.
func newPlan(desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef, owner string) *plan {
	p := newPartialPlan(desired, inventory, owner)
	p.stale, p.kept = p.kept, nil
	return p
}

// newPartialPlan is newPlan for part of the inventory: the entries that are
// not desired are kept, not pruned.
func newPartialPlan(desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef, owner string) *plan {
	inv := make(map[workv1alpha1.ObjectKey]workv1alpha1.ObjectRef, len(inventory))
	for _, r := range inventory {
		inv[r.ObjectKey] = r
	}
	p := &plan{items: make([]*item, 0, len(desired))}
	seen := make(map[workv1alpha1.ObjectKey]bool, len(desired))
	for _, obj := range desired {
		if obj == nil {
			continue
		}
		it := &item{obj: obj.DeepCopy(), ref: workv1alpha1.RefOf(obj), encrypted: sealed.IsEncrypted(obj.Object)}
		utils.RemoveCABundleFromCRD(it.obj) // an invalid caBundle is dropped, as ssa does
		k := it.ref.ObjectKey
		it.prev, it.owned = inv[k]
		p.items = append(p.items, it)
		switch {
		case !utils.IsKubernetesObject(obj):
			it.fail("is not a valid object: apiVersion, kind and metadata.name are required")
		case seen[k]:
			it.fail("is desired more than once; only the first copy is applied")
		default:
			stampManaged(it.obj, owner)
			if err := stampDigest(it.obj); err != nil {
				it.fail("could not be encoded: %v", err)
			}
		}
		seen[k] = true
	}
	for _, r := range inventory {
		if !seen[r.ObjectKey] {
			p.kept = append(p.kept, r)
			seen[r.ObjectKey] = true // an inventory listing an object twice is pruned once
		}
	}
	return p
}

// stampManaged sets propagit's managed label and the owner label naming
// this installation on obj. Render stamps the managed label already; an
// object applied without it could never be pruned nor updated again (it
// would read as someone else's). The owner label keeps two installations
// that share a member from adopting or pruning each other's objects.
func stampManaged(obj *unstructured.Unstructured, owner string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.LabelManaged] = "true"
	if owner != "" {
		labels[workv1alpha1.LabelOwner] = owner
	}
	obj.SetLabels(labels)
}

// stage is a set of items applied together.
type stage struct {
	items []*item
	// wait: the applied objects must become ready before the next stage,
	// because later objects may need them (a CRD before its custom
	// resources).
	wait bool
}

// stages splits the items the way ssa.ApplyAllStaged does: CRDs,
// Namespaces and ClusterRoles; then *Class kinds; then everything else.
func (p *plan) stages() []stage {
	var defs, classes, rest []*item
	for _, it := range p.items {
		if it.done {
			continue
		}
		switch {
		case utils.IsClusterDefinition(it.obj):
			defs = append(defs, it)
		case utils.IsClassDefinition(it.obj):
			classes = append(classes, it)
		default:
			rest = append(rest, it)
		}
	}
	return []stage{{items: defs, wait: true}, {items: classes, wait: true}, {items: rest}}
}

// failMsg fails the item with a message that already names the object.
func (it *item) failMsg(msg string) {
	it.done = true
	it.action = workv1alpha1.ActionFailed
	it.message = msg
}

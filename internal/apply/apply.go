package apply

import (
	"context"
	"fmt"
	"slices"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
)

// Apply makes the member match desired and returns what happened to every
// desired and every pruned object, and the new inventory.
//
// inventory is what propagit applied to this member before (the Inventory
// of the previous Result). Every entry that is not desired any more is
// pruned, but only when the live object still carries propagit.io/managed=
// "true"; an entry whose live copy lost the label is reported Skipped and
// leaves the inventory. The new inventory holds the desired objects applied
// now, plus previous entries that failed this time (to apply or to prune),
// so nothing propagit created is ever forgotten.
//
// Per-object failures (an invalid object, a webhook denial, a conflict) are
// results, not errors: the other objects are still applied. The error is
// non-nil only when ctx ended before the work was done; the Result is then
// still complete and its inventory still safe to store.
func (m *Manager) Apply(ctx context.Context, desired []*unstructured.Unstructured,
	inventory []workv1alpha1.ObjectRef) (*Result, error) {
	p := newPlan(desired, inventory, m.opts.Owner)
	m.decrypt(p)
	return m.run(ctx, p)
}

// ApplyChanges is Apply for a change: it applies changed, prunes removed
// (under the same rule as Apply) and leaves the rest of the inventory
// alone, unread. The Result lists changed and removed objects only; its
// Inventory is the whole new inventory. Use it when the previous desired
// state is known to be applied, so the objects that did not change need no
// request.
func (m *Manager) ApplyChanges(ctx context.Context, changed []*unstructured.Unstructured, removed,
	inventory []workv1alpha1.ObjectRef) (*Result, error) {
	p := newPartialPlan(changed, inventory, m.opts.Owner)
	m.decrypt(p)
	gone := make(map[workv1alpha1.ObjectKey]bool, len(removed))
	for _, r := range removed {
		gone[r.ObjectKey] = true
	}
	p.kept = slices.DeleteFunc(p.kept, func(r workv1alpha1.ObjectRef) bool { return gone[r.ObjectKey] })
	p.stale = removed
	return m.run(ctx, p)
}

// Check compares desired, content propagit already applied, with the
// member and reports every difference as drift (Result.Drift): objects in
// the correct mode (workv1alpha1.AnnotationDrift) are put back, warn ones are only
// reported (action Drifted), ignore ones are not read. Nothing is pruned;
// inventory entries not in desired are kept.
func (m *Manager) Check(ctx context.Context, desired []*unstructured.Unstructured,
	inventory []workv1alpha1.ObjectRef) (*Result, error) {
	p := newPartialPlan(desired, inventory, m.opts.Owner)
	p.check = true
	for _, it := range p.items {
		if !it.done && driftMode(it.obj) == workv1alpha1.DriftModeIgnore {
			it.set(workv1alpha1.ActionUnchanged)
		}
	}
	m.decrypt(p)
	return m.run(ctx, p)
}

func (m *Manager) run(ctx context.Context, p *plan) (*Result, error) {
	namespaces := m.ensureNamespaces(ctx, p)
	created := make(map[string]bool, len(namespaces))
	for _, ns := range namespaces {
		created[ns] = true
	}
	for _, s := range p.stages() {
		m.applyStage(ctx, s, created, p.check)
	}
	prunes := m.prune(ctx, p.stale)
	res := newResult(p, prunes, namespaces, ctx.Err())
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("failed to finish applying %d objects: %w", len(p.items), err)
	}
	return res, nil
}

// applyStage reads the live copies of the pending items of s, applies the
// items concurrently, then, when s is a definitions stage, waits for what it
// created or changed to be ready and, for CRDs, served. created holds the
// namespaces this call created, known to be empty.
func (m *Manager) applyStage(ctx context.Context, s stage, created map[string]bool, check bool) {
	m.readLive(ctx, s.items, created)
	parallel.Limited(ctx, len(s.items), m.opts.Concurrency, func(i int) {
		m.applyItem(ctx, s.items[i], check)
	})
	if s.wait {
		m.waitReady(ctx, s.items)
		m.waitDiscovery(ctx, s.items)
	}
}

// waitReady waits with kstatus until the created or configured items are
// Current. On timeout every waited item keeps its action and says it is not
// ready; the objects that needed it then fail on their own.
func (m *Manager) waitReady(ctx context.Context, items []*item) {
	var set object.ObjMetadataSet
	var waited []*item
	for _, it := range items {
		if it.action == workv1alpha1.ActionCreated || it.action == workv1alpha1.ActionConfigured {
			set = append(set, object.UnstructuredToObjMetadata(it.obj))
			waited = append(waited, it)
		}
	}
	if len(set) == 0 || ctx.Err() != nil {
		return
	}
	opts := ssa.WaitOptions{Interval: m.opts.WaitInterval, Timeout: m.opts.WaitTimeout}
	if err := m.ssa.WaitForSetWithContext(ctx, set, opts); err != nil {
		for _, it := range waited {
			it.message = fmt.Sprintf("%s is not ready: %v", fmtRef(it.ref), err)
		}
	}
}

package apply

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
)

// pruned is the outcome of pruning one stale inventory entry.
type pruned struct {
	ref     workv1alpha1.ObjectRef
	action  workv1alpha1.Action // Pruned, Released, Skipped or Failed; "" if not tried
	message string
}

// keep reports whether the entry stays in the inventory: it does unless it
// is gone or no longer propagit's.
func (p pruned) keep() bool {
	return p.action != workv1alpha1.ActionPruned && p.action != workv1alpha1.ActionSkipped && p.action != workv1alpha1.ActionReleased
}

// prune deletes the stale inventory entries whose live copy still carries
// propagit's managed label, with background propagation. Other objects go
// first, then definitions (CRDs, Namespaces, ClusterRoles, *Class kinds),
// so custom resources and namespace contents are not cut from under their
// definition in the same call.
func (m *Manager) prune(ctx context.Context, stale []workv1alpha1.ObjectRef) []pruned {
	out := make([]pruned, len(stale))
	var objects, defs []int
	for i, r := range stale {
		out[i].ref = r
		u := stub(r)
		if utils.IsClusterDefinition(u) || utils.IsClassDefinition(u) {
			defs = append(defs, i)
		} else {
			objects = append(objects, i)
		}
	}
	for _, group := range [][]int{objects, defs} {
		parallel.Limited(ctx, len(group), m.opts.Concurrency, func(j int) {
			i := group[j]
			out[i] = m.pruneOne(ctx, stale[i])
		})
	}
	return out
}

// pruneOne deletes one stale object if its live copy is still this
// installation's: it carries the managed label and no other installation's
// owner label (one read of its metadata, then a delete preconditioned on
// that copy's UID, with background propagation).
func (m *Manager) pruneOne(ctx context.Context, r workv1alpha1.ObjectRef) pruned {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(r.GroupVersionKind())
	err := m.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		return pruned{ref: r, action: workv1alpha1.ActionPruned}
	case err != nil && meta.IsNoMatchError(err):
		// The kind is no longer served (its CRD is gone): so is the object.
		return pruned{ref: r, action: workv1alpha1.ActionPruned, message: fmtRef(r) + " is gone: its kind is no longer served"}
	case err != nil:
		return pruned{ref: r, action: workv1alpha1.ActionFailed, message: apiRefMessage(r, "could not be read for pruning", err)}
	case live.GetLabels()[workv1alpha1.LabelManaged] != "true":
		return pruned{ref: r, action: workv1alpha1.ActionSkipped, message: fmtRef(r) +
			" was not pruned: the live object no longer carries " + workv1alpha1.LabelManaged + "=true, so propagit no longer owns it"}
	case !ownedBy(live.GetLabels(), m.opts.Owner):
		return pruned{ref: r, action: workv1alpha1.ActionSkipped, message: fmtRef(r) +
			" was not pruned: it belongs to the propagit installation " + strconv.Quote(live.GetLabels()[workv1alpha1.LabelOwner])}
	case keepOnDeletion(live.GetAnnotations()):
		return m.release(ctx, r, live, "it asked to be kept on deletion")
	case live.GetAnnotations()[AnnotationAdopted] == "true":
		return m.release(ctx, r, live, "it existed before propagit took it over, so propagit never deletes it")
	}
	uid := live.GetUID()
	err = m.client.Delete(ctx, stub(r), client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return pruned{ref: r, action: workv1alpha1.ActionFailed, message: apiRefMessage(r, "delete failed", err)}
	}
	return pruned{ref: r, action: workv1alpha1.ActionPruned}
}

// keepOnDeletion reports whether an object asks to stay on the member when
// it leaves its Work: its policy said preserveResourcesOnDeletion (Karmada
// §10.4) or its template says propagit.io/prune: disabled (the Flux habit).
// The live copy is asked, not the Work: the object has already left it.
func keepOnDeletion(ann map[string]string) bool {
	return ann[workv1alpha1.AnnotationPreserveResourcesOnDeletion] == "true" ||
		ann[workv1alpha1.AnnotationPrune] == workv1alpha1.PruneDisabled
}

// release leaves r on the member but no longer propagit's: a merge patch
// (preconditioned on its UID) removes every propagit.io/ label and
// annotation, so it is never pruned, adopted by mistake or watched again.
// why ends the result's message.
func (m *Manager) release(ctx context.Context, r workv1alpha1.ObjectRef, live *metav1.PartialObjectMetadata, why string) pruned {
	drop := func(keys map[string]string) map[string]any {
		out := map[string]any{}
		for k := range keys {
			if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
				out[k] = nil
			}
		}
		return out
	}
	patch := map[string]any{"metadata": map[string]any{"uid": string(live.GetUID()),
		"labels": drop(live.GetLabels()), "annotations": drop(live.GetAnnotations())}}
	data, err := json.Marshal(patch)
	if err == nil {
		err = m.client.Patch(ctx, stub(r), client.RawPatch(types.MergePatchType, data))
	}
	if err != nil {
		return pruned{ref: r, action: workv1alpha1.ActionFailed, message: apiRefMessage(r, "could not be released", err)}
	}
	return pruned{ref: r, action: workv1alpha1.ActionReleased, message: fmtRef(r) +
		" left the Work and stays on the member, no longer managed by propagit (" + why + ")"}
}

// stub is an object carrying only the identity of r.
func stub(r workv1alpha1.ObjectRef) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.GroupVersionKind())
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

package apply

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/normalize"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// applyItem applies one desired object whose live copy readLive already
// fetched, and records the outcome on it:
//
//   - not on the member: one apply creates it (ownership not forced, so
//     fields someone wrote meanwhile are not taken);
//   - on the member without the managed label and not allowed to be taken
//     over (Karmada §10.2): refused, nothing written;
//   - every desired field already equal on the member, including the
//     digest annotation of the desired object: unchanged, no request;
//   - a different digest (the desired object changed, or propagit never
//     applied this content): one apply, forcing ownership;
//   - the same digest but some field differs (drift, or a value the
//     apiserver normalises): a server-side dry-run, compared with the live
//     copy the way fluxcd/pkg/ssa does; if they differ, that is drift,
//     corrected (applied) or only reported as the drift mode says.
//
// check says the object was applied with this content before, so a missing
// one was deleted on the member: drift too. Replicas a scaler on the member
// owns are kept (retainReplicas), and so are the fields a customization's
// Retain script keeps (retainScripted), before anything is compared; an
// object taken over is marked adopted (stampAdopted), a decrypted one
// decrypted (stampDecrypted).
func (m *Manager) applyItem(ctx context.Context, it *item, check bool) {
	if it.encrypted {
		stampDecrypted(it)
	}
	if it.read && it.liveErr == nil {
		retainReplicas(it.obj, it.live, m.opts.FieldManager)
		if !m.retainScripted(it, m.interp.Load()) {
			return
		}
		stampAdopted(it, m.opts.Owner)
	}
	switch {
	case !it.read:
		it.fail("was not applied: its live copy was not read")
	case it.liveErr != nil:
		it.failMsg(m.apiMessage(it, "could not be read", it.liveErr))
	case it.live == nil && check:
		m.recreate(ctx, it)
	case it.live == nil:
		m.create(ctx, it)
	case refuses(it.obj, it.live.GetLabels(), m.opts.Owner):
		it.failMsg(conflictMessage(it, it.live.GetLabels()))
	case contains(it.live, it.obj):
		it.set(workv1alpha1.ActionUnchanged)
	case it.live.GetAnnotations()[workv1alpha1.AnnotationAppliedDigest] != it.obj.GetAnnotations()[workv1alpha1.AnnotationAppliedDigest]:
		m.update(ctx, it)
	default:
		m.reconcile(ctx, it)
	}
}

// create applies an object that is not on the member.
func (m *Manager) create(ctx context.Context, it *item) {
	if err := m.send(ctx, it.obj, false, false); err != nil {
		it.failMsg(m.apiMessage(it, "apply failed", err))
		return
	}
	it.set(workv1alpha1.ActionCreated)
}

// update applies an object whose content changed.
func (m *Manager) update(ctx context.Context, it *item) {
	if err := m.send(ctx, it.obj, true, false); err != nil {
		it.failMsg(m.apiMessage(it, "apply failed", err))
		return
	}
	it.set(workv1alpha1.ActionConfigured)
}

// reconcile applies an object that is on the member, if a dry-run shows it
// has drifted.
func (m *Manager) reconcile(ctx context.Context, it *item) {
	dryRun := it.obj.DeepCopy()
	if err := m.send(ctx, dryRun, true, true); err != nil {
		it.failMsg(m.apiMessage(it, "dry-run failed", err))
		return
	}
	if dryRun.GetResourceVersion() != "" && !drifted(it.live, dryRun) {
		it.set(workv1alpha1.ActionUnchanged)
		return
	}
	if dryRun.GetResourceVersion() == "" {
		m.create(ctx, it) // deleted since it was read
		return
	}
	if driftMode(it.obj) != workv1alpha1.DriftModeCorrect {
		it.noteDrift(m.opts.FieldManager, false)
		it.set(workv1alpha1.ActionDrifted)
		it.message = fmt.Sprintf("%s differs on the member (%s); drift mode %s: not corrected",
			fmtRef(it.ref), strings.Join(it.drift.Fields, ", "), driftMode(it.obj))
		return
	}
	it.noteDrift(m.opts.FieldManager, true)
	m.update(ctx, it)
	if it.action != workv1alpha1.ActionConfigured {
		it.drift.Corrected = false
	}
}

// recreate handles an object deleted on the member during a check: it is
// created again, or in the warn mode reported missing.
func (m *Manager) recreate(ctx context.Context, it *item) {
	if driftMode(it.obj) != workv1alpha1.DriftModeCorrect {
		it.noteDrift(m.opts.FieldManager, false)
		it.set(workv1alpha1.ActionDrifted)
		it.message = fmtRef(it.ref) + " was deleted on the member; drift mode " + driftMode(it.obj) + ": not recreated"
		return
	}
	it.noteDrift(m.opts.FieldManager, true)
	m.create(ctx, it)
	if it.action != workv1alpha1.ActionCreated {
		it.drift.Corrected = false
	}
}

// send server-side applies obj as the field manager; force takes the fields
// other managers own. With dryRun nothing is stored and obj is replaced by
// the object the apiserver would store.
func (m *Manager) send(ctx context.Context, obj *unstructured.Unstructured, force, dryRun bool) error {
	opts := []client.PatchOption{client.FieldOwner(m.opts.FieldManager)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if !dryRun {
		obj = obj.DeepCopy() // keep the desired object as it was given
	}
	//nolint:staticcheck // client.Apply as a patch returns the dry-run object; Client.Apply does not.
	return m.client.Patch(ctx, obj, client.Apply, opts...)
}

// drifted reports whether the dry-run result differs from the live copy in
// labels, annotations or anything outside metadata and status — the
// comparison fluxcd/pkg/ssa uses, with its normalization of dry-run output.
func drifted(live, dryRun *unstructured.Unstructured) bool {
	if !apiequality.Semantic.DeepEqual(live.GetLabels(), dryRun.GetLabels()) ||
		!apiequality.Semantic.DeepEqual(live.GetAnnotations(), dryRun.GetAnnotations()) {
		return true
	}
	return !apiequality.Semantic.DeepEqual(comparable(live), comparable(dryRun))
}

// comparable returns the content of u without metadata and status.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata")
	unstructured.RemoveNestedField(c.Object, "status")
	_ = normalize.DryRunUnstructured(c) // on error the content is compared as it is
	return c.Object
}

// refuses applies Karmada's conflict rule (§10.2): an existing object that
// is not this installation's — without propagit's managed label, or
// labelled by another propagit installation (owner) — is taken over only
// when the desired object says conflict-resolution "overwrite"; a missing
// or other value means abort. An object with the managed label and no
// owner label predates owner labels and counts as this installation's.
func refuses(obj *unstructured.Unstructured, liveLabels map[string]string, owner string) bool {
	if ownedBy(liveLabels, owner) {
		return false
	}
	return obj.GetAnnotations()[workv1alpha1.AnnotationConflict] != workv1alpha1.ConflictOverwrite
}

// ownedBy reports whether live labels say the object belongs to the
// installation owner.
func ownedBy(liveLabels map[string]string, owner string) bool {
	if liveLabels[workv1alpha1.LabelManaged] != "true" {
		return false
	}
	liveOwner := liveLabels[workv1alpha1.LabelOwner]
	return liveOwner == "" || owner == "" || liveOwner == owner
}

func conflictMessage(it *item, liveLabels map[string]string) string {
	if other := liveLabels[workv1alpha1.LabelOwner]; liveLabels[workv1alpha1.LabelManaged] == "true" && other != "" {
		return fmtRef(it.ref) + " already exists on the member and belongs to the propagit installation " + strconv.Quote(other) +
			"; set conflictResolution: Overwrite in the policy to take it over"
	}
	return fmtRef(it.ref) + " already exists on the member and propagit did not create it; " +
		"set conflictResolution: Overwrite in the policy to take it over"
}

// apiRefMessage formats an API error about r as "Kind/namespace/name <what>
// (Reason): error".
func apiRefMessage(r workv1alpha1.ObjectRef, what string, err error) string {
	reason := ""
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		reason = fmt.Sprintf(" (%s)", r)
	}
	return fmt.Sprintf("%s %s%s: %v", fmtRef(r), what, reason, err)
}

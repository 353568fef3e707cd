package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxcd/pkg/ssa"
	ssaerrors "github.com/fluxcd/pkg/ssa/errors"
	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyItem applies one desired object and records the outcome on it.
//
// An object in the inventory goes straight to drift detection (ssa.Diff:
// read + dry-run) and is sent only when it differs. Any other object is
// first read as metadata: when missing it is created with one apply; when
// present, the conflict rule decides whether it is refused or reconciled
// like an owned object.
func (m *Manager) applyItem(ctx context.Context, it *item) {
	utils.RemoveCABundleFromCRD(it.obj)
	if it.owned {
		m.reconcile(ctx, it)
		return
	}
	labels, err := m.liveLabels(ctx, it.obj)
	switch {
	case apierrors.IsNotFound(err):
		m.create(ctx, it)
	case err != nil:
		it.failMsg(apiMessage(it, "could not be read", err))
	case refuses(it.obj, labels):
		it.failMsg(conflictMessage(it))
	default:
		m.reconcile(ctx, it)
	}
}

// create applies an object that was not on the member. Ownership is not
// forced: if someone created it meanwhile, their fields are not taken.
func (m *Manager) create(ctx context.Context, it *item) {
	if err := m.send(ctx, it.obj, false); err != nil {
		it.failMsg(apiMessage(it, "apply failed", err))
		return
	}
	it.set(ActionCreated)
}

// reconcile applies an object that may exist, if it has drifted. The live
// copy ssa.Diff read is checked against the conflict rule before anything
// is written.
func (m *Manager) reconcile(ctx context.Context, it *item) {
	entry, live, _, err := m.ssa.Diff(ctx, it.obj, ssa.DefaultDiffOptions())
	if err != nil {
		if dr := (*ssaerrors.DryRunErr)(nil); errors.As(err, &dr) {
			it.failMsg(err.Error()) // already leads with Kind/namespace/name
			return
		}
		it.fail("diff failed: %v", err)
		return
	}
	switch entry.Action {
	case ssa.UnchangedAction:
		it.set(ActionUnchanged)
		return
	case ssa.CreatedAction:
		// Not on the member (any more): nothing to take over.
		if err := m.send(ctx, it.obj, true); err != nil {
			it.failMsg(apiMessage(it, "apply failed", err))
			return
		}
		it.set(ActionCreated)
		return
	case ssa.ConfiguredAction:
	default:
		it.set(ActionSkipped)
		it.message = fmtRef(it.ref) + " was skipped by the drift check"
		return
	}
	if live == nil || live.GetUID() == "" {
		it.fail("could not be read before the update")
		return
	}
	if refuses(it.obj, live.GetLabels()) {
		it.failMsg(conflictMessage(it))
		return
	}
	if err := m.send(ctx, it.obj, true); err != nil {
		it.failMsg(apiMessage(it, "apply failed", err))
		return
	}
	it.set(ActionConfigured)
}

// send server-side applies obj as the field manager; force takes the
// fields other managers own.
func (m *Manager) send(ctx context.Context, obj *unstructured.Unstructured, force bool) error {
	opts := []client.ApplyOption{client.FieldOwner(m.opts.FieldManager)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return m.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), opts...)
}

// liveLabels reads the labels of the live copy of obj as metadata only.
func (m *Manager) liveLabels(ctx context.Context, obj *unstructured.Unstructured) (map[string]string, error) {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return nil, err
	}
	return live.GetLabels(), nil
}

// refuses applies Karmada's conflict rule (§10.2): an existing object
// without propagit's managed label is taken over only when the desired
// object says conflict-resolution "overwrite"; a missing or other value
// means abort.
func refuses(obj *unstructured.Unstructured, liveLabels map[string]string) bool {
	if liveLabels[LabelManaged] == "true" {
		return false
	}
	return obj.GetAnnotations()[AnnotationConflict] != conflictOverwrite
}

func conflictMessage(it *item) string {
	return fmtRef(it.ref) + " already exists on the member and propagit did not create it; " +
		"set conflictResolution: Overwrite in the policy to take it over"
}

// apiMessage formats an API error as "Kind/namespace/name <what> (Reason): error".
func apiMessage(it *item, what string, err error) string {
	reason := ""
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		reason = fmt.Sprintf(" (%s)", r)
	}
	return fmt.Sprintf("%s %s%s: %v", fmtRef(it.ref), what, reason, err)
}

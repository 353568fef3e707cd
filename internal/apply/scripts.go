package apply

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// AnnotationDecrypted marks, on the member, an object applied from a
// SOPS-encrypted document: it holds decrypted values, so no script ever
// reads it, even when the Manager does not know its kind may be
// decrypted (a restarted agent reading health before its first apply).
const AnnotationDecrypted = "propagit.io/decrypted"

// scriptable reports whether a ResourceInterpreterCustomization's script
// may run on obj (a live copy): never on a Secret, a kind that may be
// decrypted (sealed.KindAllowed with Options.DecryptKinds), an object
// marked AnnotationDecrypted, or, for retention, one whose desired copy
// was encrypted (decrypted). What a script returns or raises reaches the
// status record, which more people read than the member's Secrets.
func (m *Manager) scriptable(obj *unstructured.Unstructured, decrypted bool) bool {
	switch {
	case decrypted, obj == nil:
		return false
	case sealed.KindAllowed(obj.GetKind(), m.opts.DecryptKinds):
		return false
	}
	return obj.GetAnnotations()[AnnotationDecrypted] != "true"
}

// scriptsFor returns the customizations in force for the live object obj,
// nil when no script may read it (scriptable): it then gets the default
// health and status reflection.
func (m *Manager) scriptsFor(obj *unstructured.Unstructured) *interpret.Interpreter {
	if obj == nil || !m.scriptable(obj, false) {
		return nil
	}
	return m.interp.Load()
}

// redactedScriptError describes a script that failed on a live object by
// where the script starts and whether its budget stopped it, never by its
// message nor the line the message names: both are the script's own
// output (it can raise any text, a fake line number too), which may carry
// what it read.
func redactedScriptError(s *interpret.Script, err error) string {
	class := "failed"
	if ie := (*interpret.Error)(nil); errors.As(err, &ie) && ie.Budget {
		class = "was stopped by its budget"
	}
	return fmt.Sprintf("%s %s (script at %s) %s (details withheld: the script read a live object)",
		interpret.DisplayCustomization(s.Customization), s.Operation, s.Location(), class)
}

// stampDecrypted marks a decrypted item's object AnnotationDecrypted.
func stampDecrypted(it *item) {
	ann := it.obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationDecrypted] = "true"
	it.obj.SetAnnotations(ann)
}

// withheld reports whether the apiserver's messages about it must not be
// kept: they may quote the values of a decrypted object or of a Secret.
func (m *Manager) withheld(it *item) bool {
	return it.encrypted || sealed.KindAllowed(it.ref.Kind, m.opts.DecryptKinds)
}

// apiMessage formats an API error as "Kind/namespace/name <what>
// (Reason): error", or, for an object whose values the error may quote
// (withheld), as "Kind/namespace/name <what>: Reason, details withheld".
func (m *Manager) apiMessage(it *item, what string, err error) string {
	if !m.withheld(it) {
		return apiRefMessage(it.ref, what, err)
	}
	reason := apierrors.ReasonForError(err)
	if reason == metav1.StatusReasonUnknown {
		reason = "Unknown"
	}
	why := "the apiserver may quote the values of a " + it.ref.Kind
	if it.encrypted {
		why = "the object holds decrypted values"
	}
	return fmt.Sprintf("%s %s: %s, details withheld: %s", fmtRef(it.ref), what, reason, why)
}

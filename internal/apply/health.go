package apply

import (
	"context"
	"fmt"
	"slices"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// Health reads every inventory object and computes its kstatus: Current,
// InProgress or Failed, NotFound when the object (or its kind) is gone, and
// Unknown when it could not be read or computed; Message explains any status
// but Current. Action is left empty: merge the health into Apply's results
// by ObjectRef. Objects are read like Apply reads them: one LIST per kind
// and namespace with several objects, a GET otherwise. Results are sorted by
// namespace, kind, group and name. The error is non-nil only when ctx ended
// first; the objects not read then say so.
func (m *Manager) Health(ctx context.Context, inventory []workv1alpha1.ObjectRef) ([]workv1alpha1.ObjectResult, error) {
	items := make([]*item, len(inventory))
	for i, r := range inventory {
		items[i] = &item{obj: stub(r), ref: r}
	}
	m.readLive(ctx, items, nil)
	out := make([]workv1alpha1.ObjectResult, len(inventory))
	for i, it := range items {
		out[i] = healthOf(it, ctx.Err(), m.scriptsFor(it.live))
	}
	slices.SortStableFunc(out, func(a, b workv1alpha1.ObjectResult) int { return compareRef(a.ObjectRef, b.ObjectRef) })
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("failed to finish reading the health of %d objects: %w", len(inventory), err)
	}
	return out, nil
}

// healthOf computes the kstatus of one object read by readLive, or, when a
// customization scripts its kind, its InterpretHealth (Current when
// healthy, InProgress when not, Unknown when the script fails, with the
// script's error redacted). ip is nil for an object no script may read
// (see scriptsFor). ctxErr explains an object that was never read.
func healthOf(it *item, ctxErr error, ip *interpret.Interpreter) workv1alpha1.ObjectResult {
	res := workv1alpha1.ObjectResult{ObjectRef: it.ref, Health: workv1alpha1.HealthUnknown}
	switch {
	case meta.IsNoMatchError(it.liveErr):
		res.Health, res.Message = workv1alpha1.HealthNotFound, fmtRef(it.ref)+" is not on the member: its kind is not served"
	case it.liveErr != nil:
		res.Message = fmt.Sprintf("%s could not be read: %v", fmtRef(it.ref), it.liveErr)
	case !it.read:
		res.Message = fmt.Sprintf("%s was not read: %v", fmtRef(it.ref), ctxErr)
	case it.live == nil:
		res.Health, res.Message = workv1alpha1.HealthNotFound, fmtRef(it.ref)+" is not on the member"
	case ip.Script(it.live, interpret.HealthInterpretation) != nil:
		healthy, s, err := ip.InterpretHealth(it.live)
		switch {
		case err != nil:
			res.Message = fmt.Sprintf("%s health could not be interpreted: %s", fmtRef(it.ref), redactedScriptError(s, err))
		case healthy:
			res.Health = workv1alpha1.HealthCurrent
		default:
			res.Health = workv1alpha1.HealthInProgress
			res.Message = fmtRef(it.ref) + ": not healthy by its ResourceInterpreterCustomization's InterpretHealth"
		}
	default:
		st, err := status.Compute(it.live)
		if err != nil {
			res.Message = fmt.Sprintf("%s status could not be computed: %v", fmtRef(it.ref), err)
			break
		}
		res.Health = workv1alpha1.Health(st.Status.String())
		if st.Status != status.CurrentStatus {
			res.Message = fmtRef(it.ref) + ": " + st.Message
		}
	}
	if it.live != nil {
		res.Status = reflectStatus(it.live, ip)
	}
	return res
}

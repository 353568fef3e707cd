package apply

import (
	"context"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Health reads every inventory object and computes its kstatus: Current,
// InProgress or Failed, NotFound when the object (or its kind) is gone, and
// Unknown when it could not be read or computed; Message explains any status
// but Current. Action is left empty: merge the health into Apply's results
// by ObjectRef. Results are sorted by namespace, kind, group and name. The error is non-nil only when ctx ended
// first; the objects not read then say so.
func (m *Manager) Health(ctx context.Context, inventory []workv1alpha1.ObjectRef) ([]workv1alpha1.ObjectResult, error) {
	out := make([]workv1alpha1.ObjectResult, len(inventory))
	forEach(ctx, len(inventory), m.opts.Concurrency, func(i int) {
		out[i] = m.healthOf(ctx, inventory[i])
	})
	for i, r := range inventory {
		if out[i].Health == "" {
			out[i] = workv1alpha1.ObjectResult{ObjectRef: r, Health: HealthUnknown,
				Message: fmt.Sprintf("%s was not read: %v", fmtRef(r), ctx.Err())}
		}
	}
	sortResults(out)
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("failed to read the health of %d objects before the context ended: %w", len(inventory), err)
	}
	return out, nil
}

// healthOf reads one object and computes its kstatus.
func (m *Manager) healthOf(ctx context.Context, r workv1alpha1.ObjectRef) workv1alpha1.ObjectResult {
	res := workv1alpha1.ObjectResult{ObjectRef: r}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvkOf(r))
	err := m.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, live)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		res.Health = HealthNotFound
		res.Message = fmtRef(r) + " is not on the member"
		return res
	case err != nil:
		res.Health = HealthUnknown
		res.Message = fmt.Sprintf("%s could not be read: %v", fmtRef(r), err)
		return res
	}
	st, err := status.Compute(live)
	if err != nil {
		res.Health = HealthUnknown
		res.Message = fmt.Sprintf("%s status could not be computed: %v", fmtRef(r), err)
		return res
	}
	res.Health = st.Status.String()
	if st.Status != status.CurrentStatus {
		res.Message = fmtRef(r) + ": " + st.Message
	}
	return res
}

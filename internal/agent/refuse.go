package agent

import (
	"context"
	"errors"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/works"
)

// A Work whose commit is not signed by the controller's key (the agent's
// --works-trusted-keys) is refused: nothing of it is applied, what the
// member runs stays, and the agent says so in its log, in the status it
// writes (which `propagit status` shows), and in the
// propagit_works_refused_total metric. A genuine Work later applies.

// refuse reports a refused Work; the same refusal is logged once.
func (a *Agent) refuse(ctx context.Context, refused *works.RefusedError) {
	// The commit comes first: `propagit status` shows a message's first
	// 60 characters.
	msg := refused.Error() + "; what is applied stays"
	if a.refused != refused.Commit {
		a.refused = refused.Commit
		a.opts.Deliver.Metrics.WorkRefused(verify.Reason(refused.Err))
		a.log.Error(refused, "Work refused: its commit is not signed by the controller's key; what is applied stays",
			logging.KeyRevision, workv1alpha1.ShortRevision(refused.Commit), "reason", verify.Reason(refused.Err))
	}
	a.syncer.SourceError(ctx, msg)
}

// asRefused returns err's *works.RefusedError, or nil.
func asRefused(err error) *works.RefusedError {
	var r *works.RefusedError
	if errors.As(err, &r) {
		return r
	}
	return nil
}

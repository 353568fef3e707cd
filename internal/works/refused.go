package works

import (
	"fmt"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// RefusedError is a Work not read because the commit that holds it is not
// signed by the controller's key: a forged Work (a leaked push credential,
// another member's agent, a compromised Git host). What the member runs
// stays.
type RefusedError struct {
	// Commit is the commit refused.
	Commit string
	// Where names the store (a repository, without credentials).
	Where string
	// What names what was refused; "the Works" when empty.
	What string
	Err  error
}

func (e *RefusedError) Error() string {
	what := e.What
	if what == "" {
		what = "the Works"
	}
	return fmt.Sprintf("refused %s at commit %s of %s, not signed by the controller's key: %v",
		what, workv1alpha1.ShortRevision(e.Commit), e.Where, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

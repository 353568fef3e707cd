package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// renderErrors notes on w the unclaimed templates and the orphans, says
// which (template, cluster) pairs failed to render
// and what each cluster keeps, and returns an exit status 1 when any did:
// everything else was rendered, but the commit does not do what it says.
func renderErrors(w io.Writer, res *render.Result, history bool) error {
	for _, u := range res.Unclaimed {
		fmt.Fprintf(w, "note: %s: %s: %s (%s)\n", u.Source, u.Template.Display(), render.UnclaimedMessage, strings.Join(u.Clusters, ", "))
	}
	for _, o := range res.Orphans {
		fmt.Fprintf(w, "note: %s: %s is removed from Git and stays on %s, no longer managed (%s)\n", o.Template.Display(), workv1alpha1.KeyOf(o.Object).Display(), o.Cluster, o.Reason)
	}
	if len(res.Errors) == 0 {
		return nil
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "error: %s: %s; %s\n", e.Source, e, keptText(e, history))
	}
	return &ExitError{Code: 1, Err: fmt.Errorf("%s: a template failed to render for a cluster; everything else was rendered", count(len(res.Errors), "render error"))}
}

// keptText says what the cluster of a failed pair keeps; history tells
// whether the render had the previous objects to keep.
func keptText(e render.RenderError, history bool) string {
	switch {
	case e.Kept:
		return "the cluster keeps its current objects"
	case !history:
		return "left out of the output; the controller keeps what the cluster runs"
	}
	return "nothing was recorded for it before, so the cluster gets nothing"
}

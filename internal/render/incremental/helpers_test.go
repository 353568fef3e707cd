package incremental_test

import (
	"slices"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/rendertest"
)

// The fixtures render's tests share (rendertest), by the names these tests
// use.
var (
	clusters     = rendertest.Clusters
	loadFiles    = rendertest.LoadFiles
	worksJSON    = rendertest.WorksJSON
	placement    = rendertest.Placement
	object       = rendertest.Object
	binding      = rendertest.Binding
	errorSummary = rendertest.ErrorSummary
	t0           = rendertest.T0
)

const nginx = rendertest.Nginx

// withPreservedLabel returns works with web's copy on m1 carrying a label
// recorded as preserved (a member-side label propagit keeps).
func withPreservedLabel(in []render.Work) []render.Work {
	works := make([]render.Work, len(in))
	for i, wk := range in {
		works[i] = render.Work{Cluster: wk.Cluster, Objects: slices.Clone(wk.Objects)}
		for j, o := range wk.Objects {
			if o.GetKind() == "Deployment" && wk.Cluster == "m1" {
				cp := o.DeepCopy()
				cp.SetLabels(map[string]string{"keep": "yes"})
				cp.SetAnnotations(map[string]string{workv1alpha1.AnnotationTemplate: webKey.String(),
					workv1alpha1.AnnotationPPNamespace: "demo", workv1alpha1.AnnotationPPName: "web",
					workv1alpha1.AnnotationScheduledReplicas: "3", workv1alpha1.AnnotationPreservedLabels: "keep"})
				works[i].Objects[j] = cp
			}
		}
	}
	return works
}

package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/render"
)

// recording is what the Works last recorded hold: the placement the next
// render starts from, and the Works themselves with their objects decoded,
// which the clusters' statuses are read against.
type recording struct {
	previous *render.Previous
	works    []*workv1alpha1.Work
	objects  map[string][]*unstructured.Unstructured
}

// newRecording describes ws, whose objects rws holds decoded.
func newRecording(ws []*workv1alpha1.Work, rws []render.Work) *recording {
	rec := &recording{previous: render.PreviousFromWorks(rws), works: ws, objects: map[string][]*unstructured.Unstructured{}}
	for _, rw := range rws {
		rec.objects[rw.Cluster] = rw.Objects
	}
	return rec
}

// health reads, when a Gracefully eviction waits on it, which templates run
// healthy on each cluster: the objects of the recorded Work whose health is
// Current, once the cluster's status says it applied that very Work (an
// older Work's health says nothing of the copy the new placement got). A
// status that cannot be read counts as not healthy; the grace period still
// ends the eviction.
func (c *Controller) health(ctx context.Context, rec *recording) render.Health {
	if !rec.previous.PendingGraceful() {
		return nil
	}
	h := render.Health{}
	for _, w := range rec.works {
		cluster := w.Spec.Cluster
		st, err := c.status.GetStatus(ctx, cluster)
		if err != nil {
			c.log.Error(err, "failed to read a work status; its cluster counts as not healthy", "cluster", cluster)
			continue
		}
		if st == nil || st.AppliedDigest != deliver.Digest(w) {
			continue
		}
		current := map[workv1alpha1.ObjectRef]bool{}
		for _, o := range st.Objects {
			ref := o.ObjectRef
			ref.Version = ""
			current[ref] = o.Health == apply.HealthCurrent
		}
		healthy := map[render.Key]bool{}
		for _, obj := range rec.objects[cluster] {
			gvk := obj.GroupVersionKind()
			ref := workv1alpha1.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
			key, err := render.ParseKey(obj.GetAnnotations()[render.AnnotationTemplate])
			if err == nil && current[ref] {
				healthy[key] = true
			}
		}
		h[cluster] = healthy
	}
	return h
}

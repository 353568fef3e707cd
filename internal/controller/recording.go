package controller

import (
	"context"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/deliver"
	"github.com/propagit/propagit/internal/render"
)

// recording is what the Works last recorded hold: the placement the next
// render starts from and, per cluster, what its Work status is read
// against.
type recording struct {
	previous *render.Previous
	works    map[string]recordedWork
}

// recordedWork is one cluster's recorded Work: its digest, which the
// cluster's status names once it has applied that Work, and the template
// each of its objects renders.
type recordedWork struct {
	digest    string
	templates map[workv1alpha1.ObjectRef]render.Key
}

// newRecording describes ws, whose objects rws holds decoded.
func newRecording(ws []*workv1alpha1.Work, rws []render.Work) *recording {
	rec := &recording{previous: render.PreviousFromWorks(rws), works: map[string]recordedWork{}}
	for _, w := range ws {
		rec.works[w.Spec.Cluster] = recordedWork{digest: deliver.Digest(w), templates: map[workv1alpha1.ObjectRef]render.Key{}}
	}
	for _, rw := range rws {
		for _, obj := range rw.Objects {
			key, err := render.ParseKey(obj.GetAnnotations()[render.AnnotationTemplate])
			if err != nil {
				continue
			}
			gvk := obj.GroupVersionKind()
			ref := workv1alpha1.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
			rec.works[rw.Cluster].templates[ref] = key
		}
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
	for cluster, w := range rec.works {
		st, err := c.status.GetStatus(ctx, cluster)
		if err != nil {
			c.log.Error(err, "failed to read a work status; its cluster counts as not healthy", "cluster", cluster)
			continue
		}
		if st == nil || st.AppliedDigest != w.digest {
			continue
		}
		healthy := map[render.Key]bool{}
		for _, o := range st.Objects {
			ref := o.ObjectRef
			ref.Version = ""
			if key, ok := w.templates[ref]; ok && o.Health == apply.HealthCurrent {
				healthy[key] = true
			}
		}
		h[cluster] = healthy
	}
	return h
}

package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/logging"
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

// work returns the recorded Work of cluster, nil when there is none.
func (rec *recording) work(cluster string) *workv1alpha1.Work {
	for _, w := range rec.works {
		if w.Spec.Cluster == cluster {
			return w
		}
	}
	return nil
}

// health reads, when a Gracefully eviction waits on it, which templates run
// healthy on each cluster: the objects of the recorded Work whose health is
// Current, once the cluster's status says it applied that very Work (an
// older Work's health says nothing of the copy the new placement got). A
// status that cannot be read in time counts as not healthy; the grace
// period still ends the eviction. The statuses are read in parallel, each
// under the probe timeout.
func (c *Controller) health(ctx context.Context, rec *recording) render.Health {
	if !rec.previous.PendingGraceful() {
		return nil
	}
	h := render.Health{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range rec.works {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if healthy := c.healthyTemplates(ctx, w, rec.objects[w.Spec.Cluster]); healthy != nil {
				mu.Lock()
				h[w.Spec.Cluster] = healthy
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return h
}

// healthyTemplates returns the templates whose objects in w run healthy on
// its cluster; nil when its status is unreadable or not of w.
func (c *Controller) healthyTemplates(ctx context.Context, w *workv1alpha1.Work, objs []*unstructured.Unstructured) map[workv1alpha1.ObjectKey]bool {
	cluster := w.Spec.Cluster
	if c.opts.ProbeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.ProbeTimeout)
		defer cancel()
	}
	st, err := c.status.GetStatus(ctx, cluster)
	if err != nil {
		c.log.Error(err, "failed to read a work status; its cluster counts as not healthy", logging.KeyCluster, cluster)
		return nil
	}
	if st == nil || st.AppliedDigest != workv1alpha1.Digest(w) {
		return nil
	}
	current := map[workv1alpha1.ObjectKey]bool{}
	for _, o := range st.Objects {
		current[o.ObjectKey] = o.Health == workv1alpha1.HealthCurrent
	}
	healthy := map[workv1alpha1.ObjectKey]bool{}
	for _, obj := range objs {
		key, err := workv1alpha1.ParseKey(obj.GetAnnotations()[workv1alpha1.AnnotationTemplate])
		if err == nil && current[workv1alpha1.KeyOf(obj)] {
			healthy[key] = true
		}
	}
	return healthy
}

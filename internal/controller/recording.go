package controller

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// recording is what the Works last recorded hold: the placement the next
// render starts from, and the Works themselves with their objects decoded,
// which the clusters' statuses are read against.
type recording struct {
	previous *render.Previous
	works    []*workv1alpha1.Work
	objects  map[string][]*unstructured.Unstructured
}

// newRecording describes ws, whose objects rws holds decoded; its history
// comes through h when not nil (what the last recording's had is reused).
func newRecording(ws []*workv1alpha1.Work, rws []render.Work, h *incremental.History) *recording {
	var previous *render.Previous
	if h != nil {
		previous = h.Next(rws)
	} else {
		previous = render.PreviousFromWorks(rws)
	}
	rec := &recording{previous: previous, works: ws, objects: map[string][]*unstructured.Unstructured{}}
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

// health reads, when a Gracefully eviction waits on it or a policy asks for
// application failover, how each template runs on each cluster, from the
// cluster's status of the recorded Work (an older Work's health says nothing
// of the copy the new placement got). It returns the templates that run
// healthy, and updates since when each runs unhealthy. A status that cannot
// be read in time counts as not healthy, and stops the unhealthy clock:
// only a member's own report moves an application. The statuses are read in
// parallel, each under the probe timeout.
func (c *Controller) health(ctx context.Context, rec *recording, set *load.Set, now time.Time) (render.Health, render.Unhealthy, render.Reflected) {
	appFailover, preserving := wantsFailover(set)
	if !rec.previous.PendingGraceful() && !appFailover && !preserving {
		c.unhealthy = nil
		return nil, nil, nil
	}
	h := render.Health{}
	reported := map[string]map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range rec.works {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if templates := c.templateHealth(ctx, w, rec.objects[w.Spec.Cluster]); templates != nil {
				mu.Lock()
				reported[w.Spec.Cluster] = templates
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var reflected render.Reflected
	for cluster, templates := range reported {
		for key, r := range templates {
			if r.Health == workv1alpha1.HealthCurrent {
				if h[cluster] == nil {
					h[cluster] = map[workv1alpha1.ObjectKey]bool{}
				}
				h[cluster][key] = true
			}
			if st := decodeStatus(r); preserving && st != nil {
				if reflected == nil {
					reflected = render.Reflected{}
				}
				if reflected[cluster] == nil {
					reflected[cluster] = map[workv1alpha1.ObjectKey]map[string]any{}
				}
				reflected[cluster][key] = st
			}
		}
	}
	if !appFailover {
		c.unhealthy = nil
		return h, nil, reflected
	}
	c.unhealthy = unhealthySince(c.unhealthy, reported, now)
	return h, c.unhealthy, reflected
}

// decodeStatus returns the status a cluster reported of an object, nil
// when it reported none.
func decodeStatus(r workv1alpha1.ObjectResult) map[string]any {
	if r.Status == nil || len(r.Status.Raw) == 0 {
		return nil
	}
	var st map[string]any
	if json.Unmarshal(r.Status.Raw, &st) != nil {
		return nil
	}
	return st
}

// unhealthySince carries prev forward: a template reported InProgress or
// Failed keeps the time it was first seen so (now when it is new), any other
// report, or none, clears it.
func unhealthySince(prev render.Unhealthy, reported map[string]map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult, now time.Time) render.Unhealthy {
	out := render.Unhealthy{}
	for cluster, templates := range reported {
		for key, r := range templates {
			if r.Health != workv1alpha1.HealthInProgress && r.Health != workv1alpha1.HealthFailed {
				continue
			}
			since, ok := prev[cluster][key]
			if !ok {
				since = now
			}
			if out[cluster] == nil {
				out[cluster] = map[workv1alpha1.ObjectKey]time.Time{}
			}
			out[cluster][key] = since
		}
	}
	return out
}

// wantsFailover reports whether some policy asks for application
// failover, and whether some policy preserves state across a failover.
func wantsFailover(set *load.Set) (application, preserving bool) {
	for _, p := range set.Propagations {
		fo := p.Policy.Spec.Failover
		if fo == nil {
			continue
		}
		if fo.Application != nil {
			application = true
			preserving = preserving || fo.Application.StatePreservation != nil
		}
		preserving = preserving || fo.Cluster != nil && fo.Cluster.StatePreservation != nil
	}
	return application, preserving
}

// templateHealth returns what its cluster reports of each template's
// object in w (health, reflected status); nil when its status is
// unreadable or not of w.
func (c *Controller) templateHealth(ctx context.Context, w *workv1alpha1.Work, objs []*unstructured.Unstructured) map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult {
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
	reported := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult{}
	for _, o := range st.Objects {
		reported[o.ObjectKey] = o
	}
	out := map[workv1alpha1.ObjectKey]workv1alpha1.ObjectResult{}
	for _, obj := range objs {
		key, err := workv1alpha1.ParseKey(obj.GetAnnotations()[workv1alpha1.AnnotationTemplate])
		if err != nil {
			continue
		}
		if r, ok := reported[workv1alpha1.KeyOf(obj)]; ok {
			out[key] = r
		}
	}
	return out
}

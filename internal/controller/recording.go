package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
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

// health reads, when a Gracefully eviction waits on it or a policy asks for
// application failover, how each template runs on each cluster, from the
// cluster's status of the recorded Work (an older Work's health says nothing
// of the copy the new placement got). It returns the templates that run
// healthy, and updates since when each runs unhealthy. A status that cannot
// be read in time counts as not healthy, and stops the unhealthy clock:
// only a member's own report moves an application. The statuses are read in
// parallel, each under the probe timeout.
func (c *Controller) health(ctx context.Context, rec *recording, set *load.Set, now time.Time) (render.Health, render.Unhealthy) {
	appFailover := wantsApplicationFailover(set)
	if !rec.previous.PendingGraceful() && !appFailover {
		c.unhealthy = nil
		return nil, nil
	}
	h := render.Health{}
	reported := map[string]map[workv1alpha1.ObjectKey]workv1alpha1.Health{}
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
	for cluster, templates := range reported {
		for key, health := range templates {
			if health == workv1alpha1.HealthCurrent {
				if h[cluster] == nil {
					h[cluster] = map[workv1alpha1.ObjectKey]bool{}
				}
				h[cluster][key] = true
			}
		}
	}
	if !appFailover {
		c.unhealthy = nil
		return h, nil
	}
	c.unhealthy = unhealthySince(c.unhealthy, reported, now)
	return h, c.unhealthy
}

// unhealthySince carries prev forward: a template reported InProgress or
// Failed keeps the time it was first seen so (now when it is new), any other
// report, or none, clears it.
func unhealthySince(prev render.Unhealthy, reported map[string]map[workv1alpha1.ObjectKey]workv1alpha1.Health, now time.Time) render.Unhealthy {
	out := render.Unhealthy{}
	for cluster, templates := range reported {
		for key, health := range templates {
			if health != workv1alpha1.HealthInProgress && health != workv1alpha1.HealthFailed {
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

// wantsApplicationFailover reports whether some policy asks for
// application failover.
func wantsApplicationFailover(set *load.Set) bool {
	for _, p := range set.Propagations {
		if fo := p.Policy.Spec.Failover; fo != nil && fo.Application != nil {
			return true
		}
	}
	return false
}

// templateHealth returns the health of each template's object in w, as its
// cluster reports it; nil when its status is unreadable or not of w.
func (c *Controller) templateHealth(ctx context.Context, w *workv1alpha1.Work, objs []*unstructured.Unstructured) map[workv1alpha1.ObjectKey]workv1alpha1.Health {
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
	reported := map[workv1alpha1.ObjectKey]workv1alpha1.Health{}
	for _, o := range st.Objects {
		reported[o.ObjectKey] = o.Health
	}
	out := map[workv1alpha1.ObjectKey]workv1alpha1.Health{}
	for _, obj := range objs {
		key, err := workv1alpha1.ParseKey(obj.GetAnnotations()[workv1alpha1.AnnotationTemplate])
		if err != nil {
			continue
		}
		if health, ok := reported[workv1alpha1.KeyOf(obj)]; ok {
			out[key] = health
		}
	}
	return out
}

package dashboard

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/status"
)

// rendered is the source of one revision rendered again, for the members'
// labels and the explain traces.
type rendered struct {
	members  map[string]MemberMeta
	bindings map[string]*render.Binding
	clusters []*clusterv1alpha1.Cluster
}

// renderCache keeps the last few revisions rendered: a render of the whole
// fleet is done once per revision, not per page view.
type renderCache struct {
	mu    sync.Mutex
	max   int
	order []string
	by    map[string]*rendered
}

func newRenderCache(max int) *renderCache {
	return &renderCache{max: max, by: map[string]*rendered{}}
}

func (c *renderCache) get(rev string) *rendered {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[rev]
}

func (c *renderCache) put(rev string, r *rendered) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.by[rev]; !ok {
		c.order = append(c.order, rev)
	}
	c.by[rev] = r
	for len(c.order) > c.max {
		delete(c.by, c.order[0])
		c.order = c.order[1:]
	}
}

// renderAt loads the fleet folder at rev and renders it as `propagit
// explain` does, with the recorded Works as the previous placement and the
// cluster state pull agents recorded; push members keep the state Git
// declares, as the dashboard never probes members.
func (s *Server) renderAt(ctx context.Context, rev string, inputs []status.Input) (*rendered, error) {
	if r := s.rendered.get(rev); r != nil {
		return r, nil
	}
	fsys, err := s.opts.Source.Tree(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("failed to read revision %s: %w", workv1alpha1.DisplayRevision(rev), err)
	}
	set, err := load.LoadWith(fsys, "/", s.opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("failed to load revision %s: %w", workv1alpha1.DisplayRevision(rev), err)
	}
	in := render.Input{Set: set, Options: s.opts.Render, Status: map[string]*clusterv1alpha1.ClusterStatus{}, Charts: dashboardCharts().For(set)}
	var prev []render.Work
	for _, i := range inputs {
		objs, err := workv1alpha1.Objects(i.Work)
		if err != nil {
			return nil, fmt.Errorf("failed to decode the Work of cluster %s: %w", i.Work.Spec.Cluster, err)
		}
		prev = append(prev, render.Work{Cluster: i.Work.Spec.Cluster, Objects: objs})
		if i.Status != nil && i.Status.Cluster != nil {
			in.Status[i.Work.Spec.Cluster] = i.Status.Cluster
		}
	}
	in.Previous = render.PreviousFromWorks(prev)
	res := render.Render(in)
	r := &rendered{members: map[string]MemberMeta{}, bindings: map[string]*render.Binding{}, clusters: res.Clusters}
	for _, c := range set.Clusters {
		r.members[c.Cluster.Name] = MemberMeta{Labels: c.Cluster.Labels, Region: c.Cluster.Spec.Region, Zone: c.Cluster.Spec.Zone}
	}
	for _, b := range res.Bindings {
		r.bindings[b.Key.String()] = b
	}
	s.rendered.put(rev, r)
	return r, nil
}

// decodeCache keeps each cluster's decoded manifests by Work digest, so a
// refresh decodes only the Works that changed.
type decodeCache struct {
	mu sync.Mutex
	by map[string]decoded
}

type decoded struct {
	digest string
	objs   []*unstructured.Unstructured
}

// objects returns the decoded manifests of each input's Work, by cluster,
// and forgets the clusters no longer recorded. A Work that does not decode
// has none (status.Build has already refused it).
func (c *decodeCache) objects(inputs []status.Input) map[string][]*unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]decoded, len(inputs))
	out := make(map[string][]*unstructured.Unstructured, len(inputs))
	for _, in := range inputs {
		name, digest := in.Work.Spec.Cluster, workv1alpha1.Digest(in.Work)
		d, ok := c.by[name]
		if !ok || d.digest != digest {
			objs, _ := workv1alpha1.Objects(in.Work)
			d = decoded{digest: digest, objs: objs}
		}
		next[name], out[name] = d, d.objs
	}
	c.by = next
	return out
}

// dashboardCharts renders the HelmCharts of the revisions the dashboard
// explains (remote charts are not fetched: the controller's own render
// recorded what runs).
var dashboardCharts = sync.OnceValue(func() *charts.Charts { return charts.New(helm.DefaultLimits(), nil) })

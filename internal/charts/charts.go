// Package charts renders the HelmChart objects of a fleet for render's
// chart expansion (render.ChartRenderer): it finds the chart a HelmChart
// names (a folder the load read, or a remote chart through a fetcher),
// merges its values, takes the cluster's capabilities from its status,
// and renders through internal/helm's bounded worker. Renders with the
// same inputs are shared between clusters and between revisions.
package charts

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// Remote fetches a remote chart's archive (see internal/helm/fetch).
type Remote func(ctx context.Context, spec *chartv1alpha1.Spec) ([]byte, error)

// Charts is a render.ChartRenderer over one loaded set. Safe for
// concurrent use; keep one per process (its renderer remembers renders)
// and give it each new set with For.
type Charts struct {
	renderer *helm.Renderer
	remote   Remote
	mu       sync.Mutex
	loaded   map[string]*helm.Chart // by chart digest of the files, or by archive reference
	outputs  map[outputKey]*render.ChartRender
}

type outputKey struct {
	out       *helm.Output
	namespace string
	chartDir  string
	chartName string
	version   string
}

// New returns Charts rendering with lim; remote, when nil, fails remote charts.
func New(lim helm.Limits, remote Remote) *Charts {
	return &Charts{renderer: helm.NewRenderer(lim), remote: remote, loaded: map[string]*helm.Chart{}, outputs: map[outputKey]*render.ChartRender{}}
}

// For returns the renderer of set's HelmCharts.
func (c *Charts) For(set *load.Set) render.ChartRenderer { return &forSet{c: c, set: set} }

type forSet struct {
	c   *Charts
	set *load.Set
}

// RenderChart implements render.ChartRenderer.
func (f *forSet) RenderChart(obj *unstructured.Unstructured, source load.Source, cluster *clusterv1alpha1.Cluster) (*render.ChartRender, error) {
	spec, err := chartv1alpha1.Decode(obj.Object)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(source.Path)
	chart, chartDir, err := f.chart(spec, dir)
	if err != nil {
		return nil, err
	}
	vals, err := f.values(spec, dir)
	if err != nil {
		return nil, err
	}
	rel := helm.Release{Name: spec.ReleaseName, Namespace: obj.GetNamespace(), Values: vals, Capabilities: capabilities(cluster)}
	if rel.Name == "" {
		rel.Name = obj.GetName()
	}
	out, err := f.c.renderer.Render(chart, rel)
	if err != nil {
		if he, ok := err.(*helm.Error); ok && he.Template != "" {
			return nil, fmt.Errorf("%s: %s", repoPath(chartDir, chart.Name, he.Template, he.Line), he.Message)
		}
		return nil, fmt.Errorf("chart %s: %v", chart.Name, err)
	}
	return f.c.convert(outputKey{out: out, namespace: rel.Namespace, chartDir: chartDir, chartName: chart.Name, version: chart.Version})
}

// repoPath names a chart file where the committer finds it: in the repo
// for a chart folder ("charts/web/templates/x.yaml:14"), in the chart
// for a remote one ("web/templates/x.yaml:14").
func repoPath(chartDir, chartName, template string, line int) string {
	p := template
	if chartDir != "" {
		p = path.Join(chartDir, strings.TrimPrefix(template, chartName+"/"))
	}
	if line > 0 {
		p = fmt.Sprintf("%s:%d", p, line)
	}
	return p
}

// chart returns the chart spec names and, for a chart folder, its path.
func (f *forSet) chart(spec *chartv1alpha1.Spec, dir string) (*helm.Chart, string, error) {
	if spec.Remote() {
		if f.c.remote == nil {
			return nil, "", fmt.Errorf("chart %s %s from %s is not available offline: give --chart-cache DIR (a copy of the controller's <cache-dir>/charts), or vendor the chart into the repository", spec.Chart, spec.Version, spec.RepoURL)
		}
		key := spec.RepoURL + "\x00" + spec.Chart + "\x00" + spec.Version + "\x00" + spec.Digest
		if ch := f.c.cached(key); ch != nil {
			return ch, "", nil
		}
		data, err := f.c.remote(context.Background(), spec)
		if err != nil {
			return nil, "", err
		}
		ch, err := helm.FromArchive(data, f.c.renderer.Limits)
		if err != nil {
			return nil, "", fmt.Errorf("chart %s %s from %s: %v", spec.Chart, spec.Version, spec.RepoURL, err)
		}
		if ch.Name != spec.Chart || ch.Version != strings.TrimPrefix(spec.Version, "v") && ch.Version != spec.Version {
			return nil, "", fmt.Errorf("chart %s %s from %s: the archive holds %s %s", spec.Chart, spec.Version, spec.RepoURL, ch.Name, ch.Version)
		}
		f.c.remember(key, ch)
		return ch, "", nil
	}
	rel := path.Join(dir, spec.Chart)
	files, ok := f.set.Charts[rel]
	if !ok {
		return nil, "", fmt.Errorf("chart folder %s was not loaded", rel)
	}
	key := fmt.Sprintf("dir\x00%s\x00%p", rel, files)
	if ch := f.c.cached(key); ch != nil {
		return ch, rel, nil
	}
	ch, err := helm.FromFiles(files, f.c.renderer.Limits)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %v", rel, err)
	}
	f.c.remember(key, ch)
	return ch, rel, nil
}

func (c *Charts) cached(key string) *helm.Chart {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loaded[key]
}

func (c *Charts) remember(key string, ch *helm.Chart) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.loaded) >= 256 {
		clear(c.loaded)
	}
	c.loaded[key] = ch
}

// values merges the values files in order, then spec.values, as `helm
// template -f a.yaml -f b.yaml --set ...` does.
func (f *forSet) values(spec *chartv1alpha1.Spec, dir string) (map[string]any, error) {
	vals := map[string]any{}
	for _, name := range spec.ValuesFiles {
		rel := path.Join(dir, name)
		data, ok := f.set.ValuesFiles[rel]
		if !ok {
			return nil, fmt.Errorf("values file %s was not loaded: name it in the HelmChart's spec.valuesFiles in Git, not only in an override", rel)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("values file %s: %v", rel, err)
		}
		vals = loader.MergeMaps(vals, m)
	}
	return loader.MergeMaps(vals, spec.Values), nil
}

// capabilities are what the cluster reported: its version, and each API
// it serves as "group/version" and "group/version/Kind", as discovery
// gives `helm install`.
func capabilities(c *clusterv1alpha1.Cluster) helm.Capabilities {
	var caps helm.Capabilities
	if c.Status == nil {
		return caps
	}
	caps.KubeVersion = c.Status.KubernetesVersion
	for _, e := range c.Status.APIEnablements {
		caps.APIVersions = append(caps.APIVersions, e.GroupVersion)
		for _, r := range e.Resources {
			if r.Kind != "" && !strings.Contains(r.Name, "/") {
				caps.APIVersions = append(caps.APIVersions, e.GroupVersion+"/"+r.Kind)
			}
		}
	}
	slices.Sort(caps.APIVersions)
	caps.APIVersions = slices.Compact(caps.APIVersions)
	return caps
}

// convert makes render's objects of a helm output: CRDs first, never
// pruned; objects in the release namespace unless cluster-scoped or
// given one. Shared by every cluster with the same output.
func (c *Charts) convert(k outputKey) (*render.ChartRender, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.outputs[k]; ok {
		return r, nil
	}
	r := &render.ChartRender{Chart: k.chartName + " " + k.version}
	var crds []*unstructured.Unstructured
	for _, o := range k.out.CRDs {
		u, err := asObject(o)
		if err != nil {
			return nil, err
		}
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[workv1alpha1.AnnotationPrune] = workv1alpha1.PruneDisabled
		u.SetAnnotations(ann)
		crds = append(crds, u)
		r.Objects = append(r.Objects, render.ChartObject{Template: o.Template, Object: u})
	}
	for _, o := range k.out.Objects {
		u, err := asObject(o)
		if err != nil {
			return nil, err
		}
		gvk := u.GroupVersionKind()
		if u.GetNamespace() == "" && !load.ClusterScoped(gvk, crds...) {
			u.SetNamespace(k.namespace)
		}
		r.Objects = append(r.Objects, render.ChartObject{Template: o.Template, Object: u})
	}
	for _, h := range k.out.Hooks {
		if h.Test() {
			continue
		}
		r.Hooks = append(r.Hooks, fmt.Sprintf("%s %s (%s) from %s", h.Kind, h.Name, strings.Join(h.Events, ","), repoPath(k.chartDir, k.chartName, h.Template, 0)))
	}
	if len(c.outputs) >= 1024 {
		clear(c.outputs)
	}
	c.outputs[k] = r
	return r, nil
}

// asObject reads a rendered object as Kubernetes does: whole numbers
// are int64, as in every object loaded from a file.
func asObject(o helm.Object) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(o.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", o.Template, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %v", o.Template, err)
	}
	if err := load.CheckRendered(u); err != nil {
		return nil, fmt.Errorf("%s: %s %q: %v", o.Template, u.GetKind(), u.GetName(), err)
	}
	return u, nil
}

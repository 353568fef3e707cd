package render

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/parallel"
)

// Helm charts (chartv1alpha1.HelmChart) are expanded before the render
// proper, in two passes over the same engine:
//
//  1. the chart pass renders the HelmCharts as ordinary templates: their
//     policy places them and overrides change them per cluster (values
//     for prod, say), with Karmada's semantics unchanged;
//  2. each (chart, cluster) is rendered by the ChartRenderer, with that
//     cluster's HelmChart and capabilities; clusters with the same inputs
//     share one render;
//  3. every object the charts render becomes a template of the main pass
//     (load.Template.Chart), claimed by its HelmChart's policy, with the
//     object each cluster got. From there it is an ordinary template:
//     scheduled (replica division applies to a chart's Deployment),
//     overridden (an imageOverrider on the chart's Deployment), restricted,
//     kept on failure, pruned, recorded.
//
// A chart that fails on a cluster keeps, on that cluster, every object it
// rendered there before (found by AnnotationHelmChart in the history).

// ChartRenderer renders a HelmChart, as overridden for cluster, from the
// file at source. The result is read-only: a renderer hands the same one
// to every caller with the same inputs.
type ChartRenderer interface {
	RenderChart(chart *unstructured.Unstructured, source load.Source, cluster *clusterv1alpha1.Cluster) (*ChartRender, error)
}

// ChartRender is what a chart rendered for one cluster.
type ChartRender struct {
	// Objects are the CRDs of crds/ (annotated to be never pruned), then
	// the objects of templates/, each with its chart file.
	Objects []ChartObject
	// Chart is the chart's name and version ("web 1.0.0").
	Chart string
	// Hooks are the chart's Helm hooks, which propagit does not run:
	// "Job demo/migrate (post-install) from web/templates/job.yaml".
	Hooks []string
}

// ChartObject is one object of a ChartRender.
type ChartObject struct {
	Template string
	Object   *unstructured.Unstructured
}

// ChartReport is what the chart expansion found, for FinishCharts.
type ChartReport struct {
	// Failed are the (chart, cluster) pairs that did not render.
	Failed []RenderError
	// Hooks lists, per HelmChart, the hooks propagit did not apply.
	Hooks map[workv1alpha1.ObjectKey][]string
	// Charts are the HelmCharts' own bindings (the chart pass), for explain.
	Charts []*Binding
	// derived marks the templates expanded from charts.
	derived map[workv1alpha1.ObjectKey]workv1alpha1.ObjectKey
}

// isHelmChart reports whether t is a HelmChart.
func isHelmChart(t *load.Template) bool {
	return chartv1alpha1.IsHelmChart(t.Object.GetAPIVersion(), t.Object.GetKind())
}

// ExpandCharts replaces the HelmCharts of in.Set with the objects their
// charts render (see above). It returns in itself when the set has none.
func ExpandCharts(in Input) (Input, *ChartReport) {
	if in.chartPass || !slices.ContainsFunc(in.Set.Templates, func(t load.Template) bool { return isHelmChart(&t) }) {
		return in, nil
	}
	charts := *in.Set
	charts.Templates = nil
	var others []load.Template
	for _, t := range in.Set.Templates {
		if isHelmChart(&t) {
			charts.Templates = append(charts.Templates, t)
		} else {
			others = append(others, t)
		}
	}
	pass := in
	pass.Set, pass.Previous, pass.chartPass = &charts, nil, true
	cr := Render(pass)
	rep := &ChartReport{Hooks: map[workv1alpha1.ObjectKey][]string{}, Charts: cr.Bindings, derived: map[workv1alpha1.ObjectKey]workv1alpha1.ObjectKey{}}
	byName := map[string]*clusterv1alpha1.Cluster{}
	for _, c := range cr.Clusters {
		byName[c.Name] = c
	}
	inGit := map[workv1alpha1.ObjectKey]load.Source{}
	for _, t := range others {
		inGit[workv1alpha1.KeyOf(t.Object)] = t.Source
	}
	rendered := renderCharts(cr, in.Charts, byName)
	derived := map[workv1alpha1.ObjectKey]*load.Template{}
	stand := map[workv1alpha1.ObjectKey]*unstructured.Unstructured{} // a kept object, for a template no cluster rendered
	var order []workv1alpha1.ObjectKey
	for _, b := range cr.Bindings {
		if b.Choice.Winner == nil {
			continue
		}
		chartKey := b.Key
		// values lists what each cluster's overrides changed in the
		// HelmChart, for explain.
		values := map[string][]string{}
		for _, t := range b.Targets {
			if t.Overrides != nil {
				for _, c := range t.Overrides.Changes {
					values[t.Cluster] = append(values[t.Cluster], c.String())
				}
			}
		}
		fail := func(cluster, msg string) {
			rep.Failed = append(rep.Failed, RenderError{Template: chartKey, Source: b.Template.Source, Cluster: cluster, Rule: -1, Message: msg})
		}
		origin := func(key workv1alpha1.ObjectKey, tmpl string) *load.Template {
			t := derived[key]
			if t == nil {
				t = &load.Template{Source: b.Template.Source, Chart: &load.ChartOrigin{Chart: chartKey, Template: tmpl, Claim: b.Choice.Winner.Policy,
					Reason:  fmt.Sprintf("it is rendered by the chart of %s, which %s claims (%s)", chartKey.Display(), policyName(b.Policy), b.Choice.Reason),
					Objects: map[string]*unstructured.Unstructured{}, Failed: map[string]string{}, Values: values}}
				derived[key] = t
				order = append(order, key)
				rep.derived[key] = chartKey
			}
			return t
		}
		var failedOn []string
		release := ""
		for _, t := range b.Targets {
			c := byName[t.Cluster]
			if c == nil || t.Suspended {
				continue
			}
			if t.Object == nil {
				if t.Failure != nil {
					fail(t.Cluster, t.Failure.detail())
					failedOn = append(failedOn, t.Cluster)
				}
				continue
			}
			if in.Charts == nil {
				fail(t.Cluster, "Helm charts are not rendered here")
				failedOn = append(failedOn, t.Cluster)
				continue
			}
			res := rendered[t]
			out, err := res.out, res.err
			if err != nil {
				fail(t.Cluster, err.Error())
				failedOn = append(failedOn, t.Cluster)
				continue
			}
			if len(out.Hooks) > 0 && len(rep.Hooks[chartKey]) == 0 {
				rep.Hooks[chartKey] = out.Hooks
			}
			release = out.Chart
			for _, o := range out.Objects {
				key := workv1alpha1.KeyOf(o.Object)
				if src, clash := inGit[key]; clash {
					fail(t.Cluster, fmt.Sprintf("%s renders %s, which %s declares too", o.Template, key.Display(), src))
					continue
				}
				if other, ok := rep.derived[key]; ok && other != chartKey {
					fail(t.Cluster, fmt.Sprintf("%s renders %s, which the chart of %s renders too", o.Template, key.Display(), other.Display()))
					continue
				}
				d := origin(key, o.Template)
				d.Chart.Objects[t.Cluster] = o.Object
			}
		}
		// A cluster the chart failed on keeps what the chart gave it.
		for _, cluster := range failedOn {
			for key, obj := range recordedOfChart(in.Previous, chartKey, cluster) {
				d := origin(key, obj.GetAnnotations()[workv1alpha1.AnnotationHelmTemplate])
				stand[key] = obj
				if d.Chart.Objects[cluster] == nil {
					d.Chart.Failed[cluster] = "the chart of " + chartKey.Display() + " did not render"
				}
			}
		}
		for key, chart := range rep.derived {
			if chart == chartKey {
				derived[key].Chart.Release = release
			}
		}
	}
	slices.SortFunc(order, func(a, b workv1alpha1.ObjectKey) int { return a.Compare(b) })
	for _, key := range order {
		t := derived[key]
		t.Object = representative(t.Chart, stand[key])
		t.Digest = originDigest(key, t.Chart)
		others = append(others, *t)
	}
	set := *in.Set
	set.Templates = others
	in.Set = &set
	return in, rep
}

// chartResult is one (chart, cluster) render.
type chartResult struct {
	out *ChartRender
	err error
}

// renderCharts renders every placed HelmChart for each of its clusters,
// in parallel: each render runs in a worker process, and a fleet's
// clusters mostly differ in a few values.
func renderCharts(cr *Result, charts ChartRenderer, byName map[string]*clusterv1alpha1.Cluster) map[*Target]chartResult {
	type job struct {
		b *Binding
		t *Target
	}
	var jobs []job
	for _, b := range cr.Bindings {
		if b.Choice.Winner == nil || charts == nil {
			continue
		}
		for _, t := range b.Targets {
			if byName[t.Cluster] != nil && !t.Suspended && t.Object != nil {
				jobs = append(jobs, job{b, t})
			}
		}
	}
	results := make([]chartResult, len(jobs))
	parallel.For(len(jobs), func() func(int) {
		return func(i int) {
			j := jobs[i]
			results[i].out, results[i].err = charts.RenderChart(j.t.Object, j.b.Template.Source, byName[j.t.Cluster])
		}
	})
	out := make(map[*Target]chartResult, len(jobs))
	for i, j := range jobs {
		out[j.t] = results[i]
	}
	return out
}

// recordedOfChart returns the objects last recorded on cluster that the
// chart of chartKey rendered, by key.
func recordedOfChart(prev *Previous, chartKey workv1alpha1.ObjectKey, cluster string) map[workv1alpha1.ObjectKey]*unstructured.Unstructured {
	if prev == nil {
		return nil
	}
	want := chartKey.Namespace + "/" + chartKey.Name
	out := map[workv1alpha1.ObjectKey]*unstructured.Unstructured{}
	for key, byCluster := range prev.Recorded {
		if obj := byCluster[cluster]; obj != nil && obj.GetAnnotations()[workv1alpha1.AnnotationHelmChart] == want {
			out[key] = obj
		}
	}
	return out
}

// representative is the object of the first cluster (by name) a chart
// rendered it for, what selectors and the explanation read; kept when
// no cluster rendered it.
func representative(o *load.ChartOrigin, kept *unstructured.Unstructured) *unstructured.Unstructured {
	var first string
	for c := range o.Objects {
		if first == "" || c < first {
			first = c
		}
	}
	if first != "" {
		return o.Objects[first]
	}
	return kept
}

// originDigest identifies everything a chart-rendered template depends
// on: its key, chart, policy and the object of each cluster.
func originDigest(key workv1alpha1.ObjectKey, o *load.ChartOrigin) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%p\x00", key, o.Chart, o.Template, o.Claim)
	clusters := make([]string, 0, len(o.Objects)+len(o.Failed))
	for c := range o.Objects {
		clusters = append(clusters, c)
	}
	for c := range o.Failed {
		clusters = append(clusters, c)
	}
	slices.Sort(clusters)
	sums := map[*unstructured.Unstructured][]byte{}
	for _, c := range clusters {
		fmt.Fprintf(h, "%s\x00", c)
		if obj := o.Objects[c]; obj != nil {
			sum, ok := sums[obj]
			if !ok {
				data, _ := json.Marshal(obj.Object)
				s := sha256.Sum256(data)
				sum = s[:]
				sums[obj] = sum
			}
			h.Write(sum)
		} else {
			fmt.Fprintf(h, "failed:%s", o.Failed[c])
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// ChartChoice is the claim of a chart-rendered template: its HelmChart's.
func ChartChoice(t *load.Template) match.Choice {
	c := match.Candidate{Policy: t.Chart.Claim}
	return match.Choice{Winner: &c, Reason: t.Chart.Reason}
}

// chartTargets keeps the targets of a chart-rendered template's binding
// that the chart rendered it for, or failed on (those keep what they
// run); the others get nothing of it.
func chartTargets(b *Binding) {
	o := b.Template.Chart
	rs := o.Claim.Policy.Spec.Placement.ReplicaScheduling
	duplicated := rs == nil || rs.ReplicaSchedulingType == "" || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingDuplicated
	kept := b.Targets[:0:0]
	for _, t := range b.Targets {
		if obj := o.Objects[t.Cluster]; obj != nil {
			if n, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found && duplicated {
				// Each cluster runs what its values say (replicaCount: 5
				// for prod), not the representative's count.
				t.Replicas = int32(n)
			}
			kept = append(kept, t)
			continue
		}
		if why, failed := o.Failed[t.Cluster]; failed {
			cp := *t
			cp.Failure = &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: t.Cluster, Rule: -1, Message: why}
			cp.Error = why
			kept = append(kept, &cp)
		}
	}
	b.Targets = kept
}

// baseObject is what target t of b renders from: the template, or for a
// chart-rendered one the object its chart rendered for t's cluster.
func baseObject(b *Binding, t *Target) *unstructured.Unstructured {
	if o := b.Template.Chart; o != nil {
		if obj := o.Objects[t.Cluster]; obj != nil {
			return obj
		}
	}
	return b.Template.Object
}

// FinishCharts reports the charts' failures once per (chart, cluster):
// the errors of the objects the failure kept give way to the chart's
// own, which says whether the cluster kept anything. rep may be nil.
func FinishCharts(r *Result, rep *ChartReport) {
	if rep == nil {
		return
	}
	kept := map[[2]string]bool{}
	r.Errors = slices.DeleteFunc(r.Errors, func(e RenderError) bool {
		chart, ok := rep.derived[e.Template]
		if !ok || !strings.HasPrefix(e.Message, "the chart of ") {
			return false
		}
		if e.Kept {
			kept[[2]string{chart.String(), e.Cluster}] = true
		}
		return true
	})
	for _, f := range rep.Failed {
		f.Kept = kept[[2]string{f.Template.String(), f.Cluster}]
		r.Errors = append(r.Errors, f)
	}
	slices.SortStableFunc(r.Errors, func(a, b RenderError) int {
		return cmp.Or(a.Template.Compare(b.Template), cmp.Compare(a.Cluster, b.Cluster))
	})
	r.Charts = rep
}

package render

import (
	"regexp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/restrict"
	"github.com/propagit/propagit/internal/schedule"
)

// Input is everything one render depends on.
type Input struct {
	Set *load.Set
	// Status replaces, per cluster name, the status declared in Git (the
	// controller's live probes). Clusters absent from the map keep Git's.
	// A status is read-only once given: internal/render/incremental knows
	// it by its pointer.
	Status map[string]*clusterv1alpha1.ClusterStatus
	// Previous is the placement of the previous render; nil for a first one.
	Previous *Previous
	Options  Options
	// Now is the time failover decisions are taken at; zero disables
	// time-based eviction (plain renders).
	Now time.Time
	// Health is what the clusters report of the copies last recorded; nil
	// (plain renders) lets a Gracefully eviction end only at its grace
	// period.
	Health Health
	// Unhealthy is, per cluster, since when each template's copy there has
	// been reported unhealthy without a break; application failover moves
	// a template off a Ready cluster once that lasts longer than its policy
	// tolerates. nil (plain renders) never triggers it.
	Unhealthy Unhealthy
	// Reflected is what the clusters last reported of each template's
	// status; failover's statePreservation reads it. nil reads nothing.
	Reflected Reflected
	// Charts renders the HelmCharts' charts (charts.go); nil fails each
	// HelmChart on every cluster it is placed on.
	Charts ChartRenderer
	// chartPass is set on the chart pass's input: HelmCharts are plain
	// templates there.
	chartPass bool
}

// Unhealthy maps cluster → template → since when the template's copy on that
// cluster has run unhealthy.
type Unhealthy map[string]map[workv1alpha1.ObjectKey]time.Time

// Of returns, per cluster, since when the template key has run unhealthy.
func (u Unhealthy) Of(key workv1alpha1.ObjectKey) map[string]time.Time {
	var out map[string]time.Time
	for cluster, templates := range u {
		if since, ok := templates[key]; ok {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[cluster] = since
		}
	}
	return out
}

// Health lists, per cluster, the templates whose copy in the Work last
// recorded for that cluster is applied and healthy there. A Gracefully
// eviction ends as soon as every cluster of its new placement runs, healthy,
// the very copy this render gives it (Karmada ends the task when the new
// placement reports Healthy).
type Health map[string]map[workv1alpha1.ObjectKey]bool

// Options tune what is never propagated and how Namespaces travel.
type Options struct {
	// SkippedNamespaces are anchored regular expressions; templates in a
	// matching namespace are never propagated. Karmada's default is kube-.*.
	SkippedNamespaces []*regexp.Regexp
	// NamespaceAutoPropagation copies every Namespace to every cluster
	// without a policy (Karmada's namespace controller, on by default).
	NamespaceAutoPropagation bool
	// Restrictions is what committers may deploy, read from outside the
	// fleet repository; nil is the default policy (restrict.Policy).
	Restrictions *restrict.Policy
}

// Result is the outcome of one render.
type Result struct {
	// Works holds, per cluster that receives anything, its objects in final
	// form; sorted by cluster name, objects sorted by Key.
	Works []Work
	// Bindings explain every template, sorted by Key.
	Bindings []*Binding
	// Clusters are the clusters rendered for, sorted by name, with the
	// effective status.
	Clusters []*clusterv1alpha1.Cluster
	// Errors are the (template, cluster) pairs that failed to render, by
	// template then cluster. Each such pair keeps, in Works, the object
	// last recorded for it (Kept), or is absent when there is none.
	Errors []RenderError
	// Unclaimed are the templates in Git that no policy claims any more
	// and that keep, in Works, their last recorded objects, by template.
	Unclaimed []Unclaimed
	// Charts is what the Helm chart expansion found; nil without HelmCharts.
	Charts *ChartReport
	// Orphans are the objects of templates removed from Git that stay on
	// their members, no longer managed (preserveResourcesOnDeletion or
	// propagit.io/prune: disabled), by cluster then object. They are not
	// in Works: the applier releases them instead of deleting them.
	Orphans []Orphan
}

// Work is what one member cluster receives.
type Work struct {
	Cluster string
	Objects []*unstructured.Unstructured
}

// PolicyRef names a propagation policy.
type PolicyRef struct {
	ClusterScoped bool   `json:"clusterScoped"`
	Namespace     string `json:"namespace,omitempty"`
	Name          string `json:"name"`
}

// Binding is the record of how one template was placed and rendered.
type Binding struct {
	Key      workv1alpha1.ObjectKey
	Template *load.Template
	// Skipped says why the template is never propagated ("" when it is not).
	Skipped string
	Choice  match.Choice
	Policy  *PolicyRef
	// Decision is the scheduler's result; nil when no policy matched.
	Decision *schedule.Decision
	// ScheduleError is set when scheduling failed; KeptPrevious says whether
	// the previous placement stayed in force (Karmada keeps it except for
	// "no cluster fits").
	ScheduleError string
	KeptPrevious  bool
	// ScriptFailed is set when ScheduleError is a customization's
	// GetReplicas script failing on the template: a render error.
	ScriptFailed bool
	AffinityName string
	// DependencyOf lists the templates whose propagateDeps pulled this one in.
	DependencyOf []string
	// DependencyError is why the template's dependencies could not be
	// read (a GetDependencies script failed); none follow it then.
	DependencyError string
	Overwrite       bool
	// DriftMode is the policy's workv1alpha1.AnnotationDrift, given to objects whose
	// template does not choose.
	DriftMode string
	Targets   []*Target
	// Evictions are the clusters the template was moved off (failover),
	// including those whose eviction ends in this render.
	Evictions []Eviction
	// Preserve is the policy's preserveResourcesOnDeletion, stamped on
	// the objects (workv1alpha1.AnnotationPreserveResourcesOnDeletion).
	Preserve bool
	// Unclaimed is set when no policy claims the template any more but it
	// ran before: its Targets are its last recorded objects, kept (Karmada
	// keeps the binding and the member objects when a policy goes, §2.4).
	Unclaimed bool
	// AlsoAutoPropagated is set on a Namespace that a policy places and
	// namespace auto-propagation also sends to every cluster.
	AlsoAutoPropagated bool
}

// Target is the rendering of a template for one cluster. There is one per
// template and cluster, so it stays small: what clusters with the same
// rendering share (Object, Overrides) is pointed to, not copied.
type Target struct {
	Cluster  string
	Replicas int32
	// Scheduled is false for clusters added only as a dependency target.
	Scheduled bool
	Suspended bool
	// Kept is set when Object is the copy last recorded for this cluster,
	// carried over unchanged: the template failed to render here, or it is
	// unclaimed.
	Kept bool
	// Overrides is what the override policies did; nil when the object
	// was not rendered here (a frozen or kept copy).
	Overrides *override.Result
	// Error is why the template did not render for this cluster (an
	// override failed, the result is not a valid object); the other
	// clusters still render. Failure holds the same, typed.
	Error   string
	Failure *RenderError
	Object  *unstructured.Unstructured
	// Evicted is set on the old copy kept, frozen, on a cluster the template
	// was moved off (purge modes Gracefully and Never).
	Evicted *Eviction
}

// Render runs the pipeline for every template: place it (match, then
// schedule), add the dependencies propagateDeps pulls in, render its object
// for each cluster (override), finish the targets (preserved labels,
// restrictions, ended evictions, what the history keeps) and group the
// objects into Works. internal/render/incremental runs the same stages,
// skipping those whose inputs did not change since its last Render.
func Render(in Input) *Result {
	in, charts := ExpandCharts(in)
	clusters := EffectiveClusters(in.Set, in.Status)
	order, keys := SortTemplates(templateKeys(in.Set.Templates))
	ip := in.Set.Interpreter()
	r := &Result{Clusters: clusters, Bindings: make([]*Binding, len(order))}
	parallel.For(len(order), func() func(int) {
		pl := NewPlacer(in, clusters, ip)
		return func(i int) { r.Bindings[i] = pl.Place(&in.Set.Templates[order[i]], keys[i]) }
	})
	byKey := NewIndex(r.Bindings)
	AddDependencies(r.Bindings, byKey, ip)
	RenderTargets(r.Bindings, clusters, OverridesByNamespace(in.Set.Overrides), ip)
	PreserveLabels(r.Bindings, in.Previous)
	RestrictTargets(r.Bindings, in.Options.Restrictions.Check, nil)
	EndEvictions(r.Bindings, in, clusters, byKey)
	KeepRecorded(r, in.Previous, byKey, nil)
	FinishCharts(r, charts)
	r.Works = Group(r.Bindings, clusters)
	return r
}

// templateKeys returns the key of each template.
func templateKeys(ts []load.Template) []workv1alpha1.ObjectKey {
	keys := make([]workv1alpha1.ObjectKey, len(ts))
	for i, t := range ts {
		keys[i] = workv1alpha1.KeyOf(t.Object)
	}
	return keys
}

// OverridesByNamespace returns, per namespace, the override policies that
// can apply there: every ClusterOverridePolicy plus that namespace's
// OverridePolicies (cluster-scoped templates get the former only). Override
// matching then looks at a handful of policies, not all of them, for each
// template and cluster. The function is safe for concurrent use.
func OverridesByNamespace(all []load.Override) func(string) []load.Override {
	var cluster []load.Override
	byNS := map[string][]load.Override{}
	for _, o := range all {
		if o.ClusterScoped {
			cluster = append(cluster, o)
		} else {
			byNS[o.Policy.Namespace] = append(byNS[o.Policy.Namespace], o)
		}
	}
	for ns, os := range byNS {
		byNS[ns] = append(slices.Clone(cluster), os...)
	}
	return func(ns string) []load.Override {
		if got, ok := byNS[ns]; ok {
			return got
		}
		return cluster
	}
}

// EffectiveClusters returns the clusters of set sorted by name, each a copy
// whose status is the live one when given, tainted by the
// ClusterTaintPolicies.
func EffectiveClusters(set *load.Set, status map[string]*clusterv1alpha1.ClusterStatus) []*clusterv1alpha1.Cluster {
	cs, taints := set.Clusters, set.TaintPolicies
	out := make([]*clusterv1alpha1.Cluster, 0, len(cs))
	for _, c := range cs {
		cp := *c.Cluster
		if s, ok := status[cp.Name]; ok && s != nil {
			cp.Status = s
		}
		applyTaintPolicies(&cp, taints)
		out = append(out, &cp)
	}
	slices.SortFunc(out, func(a, b *clusterv1alpha1.Cluster) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

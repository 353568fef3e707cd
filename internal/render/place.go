package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/schedule"
)

// reservedNamespaces are never propagated by Karmada.
var reservedNamespaces = []string{"karmada-system", "karmada-cluster"}

// skippedGroups are API groups Karmada never propagates (apart from its own,
// which load never classifies as templates).
var skippedGroups = []string{"events.k8s.io", "coordination.k8s.io"}

// Placer places templates for one worker of a Render: it matches each to
// its policy and schedules it. It is for one goroutine.
type Placer struct {
	in       Input
	clusters []*clusterv1alpha1.Cluster
	ip       *interpret.Interpreter
	// skipped caches skippedNamespace: its patterns are regular
	// expressions, and templates share few namespaces. Templates come in
	// key order, namespace first: the last answer is kept at hand.
	skipped            map[string]string
	lastNS, lastReason string
	asked              bool
}

// NewPlacer returns a Placer of the templates of in on clusters, the
// effective clusters.
func NewPlacer(in Input, clusters []*clusterv1alpha1.Cluster, ip *interpret.Interpreter) *Placer {
	return &Placer{in: in, clusters: clusters, ip: ip, skipped: map[string]string{}}
}

func (pl *Placer) skippedNamespace(ns string) string {
	if pl.asked && ns == pl.lastNS {
		return pl.lastReason
	}
	r, ok := pl.skipped[ns]
	if !ok {
		r = skippedNamespace(ns, pl.in.Options)
		pl.skipped[ns] = r
	}
	pl.lastNS, pl.lastReason, pl.asked = ns, r, true
	return r
}

// Place decides the policy and the clusters of template t, of key key:
// match.Policies, then schedulePolicy.
func (pl *Placer) Place(t *load.Template, key workv1alpha1.ObjectKey) *Binding {
	b := pl.Begin(t, key)
	if b.Skipped != "" {
		return b
	}
	prev := pl.in.Previous.lookup(key)
	if t.Chart != nil {
		b.Choice = ChartChoice(t)
	} else {
		b.Choice = match.Policies(t.Object, t.Object.GetNamespace() != "", pl.in.Set.Propagations, prev.claim())
	}
	if p := pl.Claim(b); p != nil {
		pl.Schedule(b, p, prev)
	}
	pl.End(b)
	return b
}

// Begin starts the binding of template t, of key key, with why it is
// skipped, if it is.
func (pl *Placer) Begin(t *load.Template, key workv1alpha1.ObjectKey) *Binding {
	return &Binding{Key: key, Template: t, Skipped: skipReason(key, t.Object, pl.skippedNamespace)}
}

// Claim records on b what the winning policy of b.Choice decides besides
// the placement, and returns that policy (nil when none won).
func (pl *Placer) Claim(b *Binding) *load.Propagation {
	if b.Choice.Winner == nil {
		return nil
	}
	p := b.Choice.Winner.Policy
	b.Policy = &PolicyRef{ClusterScoped: p.ClusterScoped, Namespace: p.Policy.Namespace, Name: p.Policy.Name}
	if p.ClusterScoped {
		b.Policy.Namespace = ""
	}
	b.Overwrite = p.Policy.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite
	b.DriftMode = p.Policy.Annotations[workv1alpha1.AnnotationDrift]
	b.Preserve = p.Policy.Spec.PreserveResourcesOnDeletion != nil && *p.Policy.Spec.PreserveResourcesOnDeletion
	return p
}

// Schedule places b on clusters under policy p (schedulePolicy); prev is
// its previous placement.
func (pl *Placer) Schedule(b *Binding, p *load.Propagation, prev *PreviousTemplate) {
	in := pl.in
	schedulePolicy(b, p.Policy, prev, pl.clusters, in.Unhealthy.Of(b.Key), in.Reflected.of(b.Key), in.Now, pl.ip)
	if b.Template.Chart != nil {
		chartTargets(b)
	}
}

// End adds namespace auto-propagation to the binding of a Namespace; false
// when b is no Namespace's. Auto-propagation added to what a policy placed
// when it sets b.AlsoAutoPropagated.
func (pl *Placer) End(b *Binding) bool {
	if !isNamespaceKey(b.Key, b.Template.Object) {
		return false
	}
	autoPropagate(b, pl.in.Options, pl.clusters)
	return true
}

func schedulePolicy(b *Binding, p *policyv1alpha1.PropagationPolicy, prev *PreviousTemplate, clusters []*clusterv1alpha1.Cluster,
	unhealthy map[string]time.Time, reflected map[string]map[string]any, now time.Time, ip *interpret.Interpreter) {
	in := schedule.Input{Template: b.Template.Object, Placement: p.Spec.Placement, Clusters: clusters}
	if prev != nil {
		pl, evictions := evict(p, prev, clusters, unhealthy, reflected, now)
		in.Previous = &pl // less the evicted clusters
		b.Evictions = evictions
	}
	var d schedule.Decision
	interpreted, ierr := interpretReplicas(b.Template.Object, ip)
	err := error(&schedule.Error{Message: fmt.Sprint(ierr)}) // keeps the previous placement
	if ierr == nil {
		in.Interpreted = interpreted
		d, err = schedule.Schedule(in)
	}
	b.Decision = &d
	targets := d.Clusters
	b.AffinityName = d.AffinityName
	if err != nil {
		b.ScheduleError = err.Error()
		var se *schedule.Error
		targets = nil
		if in.Previous != nil && !(errors.As(err, &se) && se.NoClusterFit) {
			b.KeptPrevious = true
			targets = in.Previous.Clusters
			b.AffinityName = in.Previous.AffinityName
		}
	}
	slab := make([]Target, len(targets)) // one allocation: a template may go to thousands of clusters
	b.Targets = slices.Grow(b.Targets, len(targets))
	for i, tc := range targets {
		slab[i] = Target{Cluster: tc.Name, Replicas: tc.Replicas, Scheduled: true, Suspended: suspended(p.Spec.Suspension, tc.Name)}
		b.Targets = append(b.Targets, &slab[i])
	}
	if ierr != nil {
		failReplicas(b, ierr)
	}
	keepEvicted(b, prev)
}

// suspended reports whether dispatching to cluster is paused.
func suspended(s *policyv1alpha1.Suspension, cluster string) bool {
	if s == nil {
		return false
	}
	if s.Dispatching != nil && *s.Dispatching {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}

// skipReason says why a template is never propagated, or ""; skipped is
// skippedNamespace under the render's options.
func skipReason(key workv1alpha1.ObjectKey, obj *unstructured.Unstructured, skipped func(string) string) string {
	// The key answers without reading the object (cold in a large fleet);
	// the object is read only for the two core kinds that need its version.
	namespace := isNamespaceKey(key, obj)
	ns := key.Namespace
	if namespace {
		ns = key.Name
	}
	if r := skipped(ns); r != "" && !(namespace && ns == "default") {
		return r
	}
	if slices.Contains(skippedGroups, key.Group) || (key.Group == "" && key.Kind == "Event" && obj.GetAPIVersion() == "v1") {
		return fmt.Sprintf("Karmada never propagates API group %q", key.Group)
	}
	if ns == "kube-system" && key.Kind == "ConfigMap" && key.Name == "extension-apiserver-authentication" {
		return "Karmada never propagates kube-system/extension-apiserver-authentication"
	}
	return ""
}

// skippedNamespace says why namespace ns is skipped, or "".
func skippedNamespace(ns string, o Options) string {
	if ns == "" {
		return ""
	}
	if slices.Contains(reservedNamespaces, ns) || strings.HasPrefix(ns, "karmada-es-") {
		return fmt.Sprintf("namespace %q is reserved by Karmada and never propagated", ns)
	}
	for _, re := range o.SkippedNamespaces {
		if re.MatchString(ns) {
			return fmt.Sprintf("namespace %q matches the skipped-namespace pattern %s and is never propagated", ns, re)
		}
	}
	return ""
}

func isNamespace(obj *unstructured.Unstructured) bool {
	return obj.GetAPIVersion() == "v1" && obj.GetKind() == "Namespace"
}

// isNamespaceKey is isNamespace for the object of key, which it reads only
// when the key says Namespace: template objects are cold in a large fleet.
func isNamespaceKey(key workv1alpha1.ObjectKey, obj *unstructured.Unstructured) bool {
	return key.Group == "" && key.Kind == "Namespace" && isNamespace(obj)
}

// autoPropagate adds Karmada's namespace auto-propagation to the binding
// of a Namespace (semantics §3.2): every cluster receives it, with no
// policy, unless it is default, labelled to skip auto-propagation, or
// auto-propagation is off. A ClusterPropagationPolicy that selects the
// Namespace has placed it already; both apply, so it reaches the policy's
// clusters and every other one.
func autoPropagate(b *Binding, o Options, clusters []*clusterv1alpha1.Cluster) {
	why := noAutoPropagation(b.Template.Object, o)
	if why != "" {
		if b.Choice.Winner == nil {
			b.Choice.Reason = "no ClusterPropagationPolicy selects it and " + why
		}
		return
	}
	if b.Choice.Winner == nil {
		b.Choice.Reason = "Namespaces propagate to every cluster without a policy (Karmada's namespace auto-propagation)"
	} else {
		b.Choice.Reason += "; namespace auto-propagation sends it to every other cluster too"
		b.AlsoAutoPropagated = true
	}
	placed := map[string]bool{}
	for _, t := range b.Targets {
		placed[t.Cluster] = true
	}
	targets := slices.Clip(b.Targets) // an append copies: the targets may be shared
	for _, c := range clusters {
		if !placed[c.Name] {
			targets = append(targets, &Target{Cluster: c.Name, Scheduled: true})
		}
	}
	byCluster := func(x, y *Target) int { return strings.Compare(x.Cluster, y.Cluster) }
	if !slices.IsSortedFunc(targets, byCluster) {
		targets = slices.Clone(targets)
		slices.SortStableFunc(targets, byCluster)
	}
	b.Targets = targets
}

// noAutoPropagation says why Namespace obj is not auto-propagated, or "".
func noAutoPropagation(obj *unstructured.Unstructured, o Options) string {
	switch {
	case !o.NamespaceAutoPropagation:
		return "namespace auto-propagation is off (--namespace-auto-propagation=false)"
	case obj.GetName() == "default":
		return `namespace "default" is never auto-propagated`
	case strings.EqualFold(obj.GetLabels()[workv1alpha1.LabelSkipAutoPropagation], "true"):
		return fmt.Sprintf("it is labelled %s=true, which stops auto-propagation", workv1alpha1.LabelSkipAutoPropagation)
	}
	return ""
}

package load

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/configv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// Source is where an object was declared: a slash-separated path relative to
// the loaded folder, and the 1-based line of the document's first line.
type Source struct {
	Path string `json:"path"`
	Line int    `json:"line"`
}

// String renders "path:line".
func (s Source) String() string {
	if s.Line == 0 {
		return s.Path
	}
	return fmt.Sprintf("%s:%d", s.Path, s.Line)
}

// Template is an ordinary Kubernetes object that policies may propagate.
type Template struct {
	// Object is read-only: a Cache hands the same object to every Load
	// until its file changes. Copy it before changing it.
	Object *unstructured.Unstructured
	Source Source
	// Digest identifies the document the template was parsed from; set
	// only by a Cache (zero otherwise). Renders use it to tell an unchanged
	// template without encoding it.
	Digest [32]byte
	// Chart is set on an object a HelmChart's chart rendered (render
	// makes these templates): it differs per cluster.
	Chart *ChartOrigin
}

// ChartOrigin is where a template rendered from a Helm chart comes from,
// and what each cluster gets of it.
type ChartOrigin struct {
	// Chart is the HelmChart, Template the chart file that rendered the
	// object ("web/templates/deployment.yaml").
	Chart    workv1alpha1.ObjectKey
	Template string
	// Claim is the policy that claims the HelmChart, and Reason why.
	Claim  *Propagation
	Reason string
	// Objects is the object each cluster gets, rendered for it; Failed
	// says, per cluster, why the chart did not render there (the cluster
	// keeps what it runs). A cluster in neither gets nothing.
	Objects map[string]*unstructured.Unstructured
	Failed  map[string]string
	// Release is the chart and version rendered ("web 1.0.0"); Values
	// lists, per cluster, what its overrides changed in the HelmChart.
	Release string
	Values  map[string][]string
}

// Propagation is a PropagationPolicy (ClusterScoped false) or a
// ClusterPropagationPolicy (ClusterScoped true).
type Propagation struct {
	Policy        *policyv1alpha1.PropagationPolicy
	ClusterScoped bool
	Source        Source
}

// Override is an OverridePolicy (ClusterScoped false) or a
// ClusterOverridePolicy (ClusterScoped true).
type Override struct {
	Policy        *policyv1alpha1.OverridePolicy
	ClusterScoped bool
	Source        Source
}

// Display is how messages name the policy, as they name every object
// (ObjectKey.Display).
func (p Propagation) Display() string {
	return PolicyDisplay(policyv1alpha1.KindPropagationPolicy, p.ClusterScoped, p.Policy.Namespace, p.Policy.Name)
}

// Display is how messages name the policy, as they name every object
// (ObjectKey.Display); an override's failure carries it, for render to
// find the policy again.
func (o Override) Display() string {
	return PolicyDisplay(policyv1alpha1.KindOverridePolicy, o.ClusterScoped, o.Policy.Namespace, o.Policy.Name)
}

// PolicyDisplay is the Display form of a policy of kind (the namespaced
// kind's name), "Cluster"+kind without a namespace when clusterScoped.
func PolicyDisplay(kind string, clusterScoped bool, namespace, name string) string {
	if clusterScoped {
		kind, namespace = "Cluster"+kind, ""
	}
	return workv1alpha1.ObjectKey{Group: policyv1alpha1.Group, Kind: kind, Namespace: namespace, Name: name}.Display()
}

// Cluster is a member cluster declared in Git.
type Cluster struct {
	Cluster *clusterv1alpha1.Cluster
	Source  Source
}

// Customization is a ResourceInterpreterCustomization declared in Git.
type Customization struct {
	Customization *configv1alpha1.ResourceInterpreterCustomization
	// Compiled holds its scripts, each located at its first line in Git.
	Compiled interpret.Customization
	Source   Source
}

// Finding is a non-fatal problem found while loading, such as a Karmada kind
// propagit does not implement. The object it names is never propagated.
type Finding struct {
	Source  Source
	Message string
}

// String renders "path:line: message".
func (f Finding) String() string { return f.Source.String() + ": " + f.Message }

// Set is everything loaded from one folder, each list in a stable order
// (by path, then line).
type Set struct {
	Templates    []Template
	Propagations []Propagation
	Overrides    []Override
	Clusters     []Cluster
	// Customizations are the ResourceInterpreterCustomizations, their
	// scripts compiled.
	Customizations []Customization
	// TaintPolicies are the ClusterTaintPolicies, in the order loaded.
	TaintPolicies []TaintPolicy
	// Rollouts are the RolloutPolicies: how new revisions reach the
	// fleet, wave by wave.
	Rollouts []Rollout
	Findings []Finding
	// Charts are the files of the chart folders HelmCharts name, by the
	// folder's path (relative to the loaded folder), each by its path in
	// the chart folder. ValuesFiles are the HelmCharts' values files, by
	// path.
	Charts      map[string]map[string][]byte
	ValuesFiles map[string][]byte
}

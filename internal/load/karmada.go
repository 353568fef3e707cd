package load

import (
	"reflect"

	yaml "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

var metaType = reflect.TypeFor[metav1.ObjectMeta]()

// docInfo is what classifying a document needs beyond its node.
type docInfo struct {
	src     Source
	excerpt bool
}

// apply records a verdict; it reports whether the object is to be loaded.
func (c *collector) apply(v verdict) bool {
	c.problems = append(c.problems, v.problems...)
	c.set.Findings = append(c.set.Findings, v.findings...)
	return len(v.problems) == 0 && !v.skip
}

// describe names an object in a message the one way messages do
// (ObjectKey.Display), or by its kind alone (Kind.group) when it has no
// name to name it by.
func describe(group, kind, namespace, name string) string {
	if name == "" && group == "" {
		return kind
	}
	if name == "" {
		return kind + "." + group
	}
	return workv1alpha1.ObjectKey{Group: group, Kind: kind, Namespace: namespace, Name: name}.Display()
}

// propagation decodes a PropagationPolicy or ClusterPropagationPolicy.
func (c *collector) propagation(di docInfo, n *yaml.Node, clusterScoped bool) {
	p := &policyv1alpha1.PropagationPolicy{}
	d := decodeStrict(n, p, "")
	semantic := policyMeta(&p.ObjectMeta, clusterScoped)
	semantic = append(semantic, validatePropagation(p, clusterScoped)...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(policyv1alpha1.Group, p.Kind, p.Namespace, p.Name))) {
		c.set.Propagations = append(c.set.Propagations, Propagation{Policy: p, ClusterScoped: clusterScoped, Source: di.src})
	}
}

// override decodes an OverridePolicy or ClusterOverridePolicy.
func (c *collector) override(di docInfo, n *yaml.Node, clusterScoped bool) {
	p := &policyv1alpha1.OverridePolicy{}
	d := decodeStrict(n, p, "")
	semantic := policyMeta(&p.ObjectMeta, clusterScoped)
	semantic = append(semantic, validateOverride(p, d.present)...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(policyv1alpha1.Group, p.Kind, p.Namespace, p.Name))) {
		c.set.Overrides = append(c.set.Overrides, Override{Policy: p, ClusterScoped: clusterScoped, Source: di.src})
	}
}

// cluster decodes a Cluster. Clusters are cluster-scoped: a namespace
// written in Git is dropped, as the API server would. The status stands
// for observed state and is read leniently: scalars are taken as strings
// where strings are expected (a hand-written `status: False`).
func (c *collector) cluster(di docInfo, n *yaml.Node) {
	cl := &clusterv1alpha1.Cluster{}
	d := decodeStrict(n, cl, "status")
	ck := &checker{}
	ck.required("metadata.name", cl.Name)
	cl.Namespace = ""
	semantic := append(ck.issues, validateCluster(cl)...)
	if c.apply(d.judge(di.src, semantic, di.excerpt, describe(clusterv1alpha1.Group, clusterv1alpha1.KindCluster, "", cl.Name))) {
		c.set.Clusters = append(c.set.Clusters, Cluster{Cluster: cl, Source: di.src})
	}
}

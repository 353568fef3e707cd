package override

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// testDigest is the digest Karmada's image overrider tests use.
const testDigest = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"

// readObject loads a template from testdata.
func readObject(t testing.TB, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("failed to convert %s to JSON: %v", file, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(doc); err != nil {
		t.Fatalf("failed to decode %s: %v", file, err)
	}
	return obj
}

// member returns a cluster with a name and labels.
func member(name string, labels map[string]string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// policyOption edits an OverridePolicy under construction.
type policyOption func(*policyv1alpha1.OverridePolicy)

// op builds an OverridePolicy in namespace default.
func op(name string, opts ...policyOption) load.Override {
	p := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, o := range opts {
		o(p)
	}
	return load.Override{Policy: p, Source: load.Source{Path: "policies/" + name + ".yaml", Line: 1}}
}

// cop builds a ClusterOverridePolicy.
func cop(name string, opts ...policyOption) load.Override {
	p := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(p)
	}
	return load.Override{Policy: p, ClusterScoped: true, Source: load.Source{Path: "policies/" + name + ".yaml", Line: 1}}
}

func inNamespace(ns string) policyOption {
	return func(p *policyv1alpha1.OverridePolicy) { p.Namespace = ns }
}

func selecting(sels ...policyv1alpha1.ResourceSelector) policyOption {
	return func(p *policyv1alpha1.OverridePolicy) {
		p.Spec.ResourceSelectors = append(p.Spec.ResourceSelectors, sels...)
	}
}

// withRule appends an override rule; target nil means every cluster.
func withRule(target *policyv1alpha1.ClusterAffinity, ov policyv1alpha1.Overriders) policyOption {
	return func(p *policyv1alpha1.OverridePolicy) {
		p.Spec.OverrideRules = append(p.Spec.OverrideRules, policyv1alpha1.RuleWithCluster{TargetCluster: target, Overriders: ov})
	}
}

// clusters targets clusters by name.
func clusters(names ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: names}
}

// deployments selects Deployments, by name when one is given.
func deployments(name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

// labelled selects Deployments by a label.
func labelled(key, value string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{
		APIVersion:    "apps/v1",
		Kind:          "Deployment",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
	}
}

// raw wraps JSON text as an API value.
func raw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

// plain builds a plaintext overrider list.
func plain(ops ...policyv1alpha1.PlaintextOverrider) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{Plaintext: ops}
}

// set is a plaintext entry.
func set(operator, path, value string) policyv1alpha1.PlaintextOverrider {
	o := policyv1alpha1.PlaintextOverrider{Operator: operator, Path: path}
	if value != "" {
		o.Value = raw(value)
	}
	return o
}

// applyRule applies one rule of one OverridePolicy "p" to the object in file,
// on cluster member1.
func applyRule(t testing.TB, file string, ov policyv1alpha1.Overriders) (*unstructured.Unstructured, Result, error) {
	t.Helper()
	obj := readObject(t, file)
	res, err := Apply(obj, member("member1", nil), []load.Override{op("p", withRule(nil, ov))})
	return obj, res, err
}

// valueAt returns the value at a JSON pointer, or "<absent>".
func valueAt(t testing.TB, obj *unstructured.Unstructured, pointer string) any {
	t.Helper()
	v, ok := lookup(obj.Object, pointer)
	if !ok {
		return "<absent>"
	}
	return v
}

// valuesAt returns the values at several JSON pointers.
func valuesAt(t testing.TB, obj *unstructured.Unstructured, pointers []string) map[string]any {
	t.Helper()
	out := make(map[string]any, len(pointers))
	for _, p := range pointers {
		out[p] = valueAt(t, obj, p)
	}
	return out
}

// errString returns err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

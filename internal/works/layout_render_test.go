package works_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// TestObjectPathMatchesRender keeps the work branch laid out exactly like
// `propagit render` output.
func TestObjectPathMatchesRender(t *testing.T) {
	for _, o := range []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg", "namespace": "web"}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "web"}},
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx", "namespace": "default"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "system:reader"}},
		{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "works.propagit.io"}},
		{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy", "metadata": map[string]any{"name": "x.y", "namespace": "n"}},
		{"apiVersion": "not/a/version", "kind": "Odd", "metadata": map[string]any{"name": "odd"}},
		{"apiVersion": "", "kind": "", "metadata": map[string]any{"name": "empty"}},
	} {
		u := &unstructured.Unstructured{Object: o}
		if got, want := works.ObjectPath(u), workv1alpha1.KeyOf(u).Path(); got != want {
			t.Errorf("ObjectPath(%s) = %q, render writes %q", u.GetName(), got, want)
		}
	}
}

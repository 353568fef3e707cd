package render_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRemoveWithValueIgnoresTheValue renders the overriders that load now
// accepts with a value next to remove (Karmada accepts them: its webhook
// does not check plaintext values, and ImageOverrider.value is "ignored
// when operator is remove"; karmada-semantics.md §6.2, §6.3): the remove
// happens and the value has no effect.
func TestRemoveWithValueIgnoresTheValue(t *testing.T) {
	for _, tc := range []struct {
		name, overriders string
		field            []string
		want             any
	}{
		{name: "plaintext remove with a value removes the field",
			overriders: "      plaintext:\n      - {path: /spec/template/spec/containers/0/envFrom, operator: remove, value: [x]}\n",
			field:      []string{"spec", "template", "spec", "containers"}, want: nil},
		{name: "imageOverrider remove of the tag with a value removes the tag",
			overriders: "      imageOverrider:\n      - {component: Tag, operator: remove, value: v9}\n",
			field:      []string{"spec", "template", "spec", "containers"}, want: "nginx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := renderFiles(t, map[string]string{
				"clusters.yaml": clusters("m1"),
				"app.yaml":      nginx,
				"env.yaml":      nginxEnv,
				"pp.yaml":       pp("nginx", ""),
				"op.yaml": "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o, namespace: demo}\nspec:\n" +
					"  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]\n  overrideRules:\n  - overriders:\n" + tc.overriders,
			}, nil)
			d := object(t, res, "m1", "Deployment.apps/demo/nginx")
			containers, _, _ := unstructured.NestedSlice(d.Object, tc.field...)
			if len(containers) != 1 {
				t.Fatalf("containers = %v", containers)
			}
			c := containers[0].(map[string]any)
			switch want := tc.want.(type) {
			case nil:
				if _, ok := c["envFrom"]; ok {
					t.Errorf("envFrom still set: %v", c["envFrom"])
				}
			case string:
				if c["image"] != want {
					t.Errorf("image = %v, want %s", c["image"], want)
				}
			}
		})
	}
}

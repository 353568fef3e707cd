package load

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// sealed admits a SOPS-encrypted template (a top-level sops mapping): its
// kind must be one that may be encrypted and its metadata readable, since
// render places and overrides it by metadata. The document as committed
// rides along in an annotation, because its MAC covers the original order
// and values; the encrypted values are never decoded here. It reports
// false, with a Problem, when the template must not load.
func (c *collector) sealed(di docInfo, n *yaml.Node, gvk schema.GroupVersionKind, obj *unstructured.Unstructured) bool {
	if s := lookup(n, sealed.MetadataKey); s == nil || s.Kind != yaml.MappingNode {
		return true
	}
	what := describe(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
	if c.kustomized {
		c.problems = append(c.problems, problemf(di.src, "sops",
			"%s is SOPS-encrypted, and kustomize rewrites the documents it builds, which breaks their MAC: keep it in a folder without kustomization.yaml and change its metadata with overrides", what))
		return false
	}
	if kinds := c.decryptKinds(); gvk.Group != "" || !sealed.KindAllowed(gvk.Kind, kinds) {
		c.problems = append(c.problems, problemf(di.src, "sops",
			"%s is SOPS-encrypted, but only these kinds may be: %s (more with --decrypt-kinds)", what, strings.Join(append(slices.Clone(sealed.DefaultKinds), kinds...), ", ")))
		return false
	}
	for _, f := range []string{"apiVersion", "kind"} {
		if v, _ := obj.Object[f].(string); sealed.IsValue(v) {
			c.problems = append(c.problems, problemf(di.src, f, "%s: %s is encrypted; encrypt only the values (sops --encrypted-regex '^(data|stringData)$')", what, f))
			return false
		}
	}
	meta, _ := obj.Object["metadata"].(map[string]any)
	if paths := sealed.Paths(meta); len(paths) > 1 {
		c.problems = append(c.problems, problemf(di.src, "metadata"+paths[1][len("/"):],
			"%s: metadata is encrypted, so propagit could not place it; encrypt only the values (sops --encrypted-regex '^(data|stringData)$')", what))
		return false
	}
	doc, err := yaml.Marshal(n)
	if err != nil {
		c.problems = append(c.problems, problemf(di.src, "", "%s: failed to keep the SOPS document: %v", what, err))
		return false
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[workv1alpha1.AnnotationSOPSDocument] = string(doc)
	obj.SetAnnotations(ann)
	return true
}

// decryptKinds are the kinds the operator allows to be encrypted besides
// Secret.
func (c *collector) decryptKinds() []string {
	if c.budget == nil {
		return nil
	}
	return c.budget.opts.DecryptKinds
}

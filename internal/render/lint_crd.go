package render

import (
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/load"
)

// lintCustomFields checks custom resources whose CRD is in the fleet
// against the CRD's schema, with the API server's own pruning: a field the
// schema does not have is dropped on apply, so `sise: 3` would ship as a
// resource without its size. Each is a warning at the field's line.
func lintCustomFields(set *load.Set, loc *locator) []Finding {
	schemas := crdSchemas(set)
	if len(schemas) == 0 {
		return nil
	}
	var out []Finding
	for _, t := range set.Templates {
		s := schemas[t.Object.GroupVersionKind()]
		if s == nil {
			continue
		}
		obj := runtime.DeepCopyJSONValue(t.Object.Object)
		pruned := pruning.PruneWithOptions(obj, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		for _, path := range pruned {
			if path == "sops" || strings.HasPrefix(path, "sops.") {
				continue // read by propagit, removed on decryption
			}
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleUnknownField, Finding: load.Finding{
				Source: loc.at(t.Source, path),
				Message: fmt.Sprintf("%s: %s: unknown field%s; its CustomResourceDefinition's schema does not have it, so the API server drops it",
					describeTemplate(t), path, schemaSuggestion(s, path))}})
		}
	}
	return out
}

// describeTemplate names a template as Kind.group/namespace/name.
func describeTemplate(t load.Template) string {
	gvk := t.Object.GroupVersionKind()
	id := gvk.Kind + "." + gvk.Group + "/"
	if ns := t.Object.GetNamespace(); ns != "" {
		id += ns + "/"
	}
	return id + t.Object.GetName()
}

// crdSchemas reads the structural schema of every served version of every
// CustomResourceDefinition in the fleet. A CRD that does not convert or
// whose schema is not structural is left out: the API server refuses it,
// and its resources are not checked.
func crdSchemas(set *load.Set) map[schema.GroupVersionKind]*structuralschema.Structural {
	out := map[schema.GroupVersionKind]*structuralschema.Structural{}
	for _, t := range set.Templates {
		if t.Object.GetKind() != "CustomResourceDefinition" || t.Object.GetAPIVersion() != "apiextensions.k8s.io/v1" {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(t.Object.Object, &crd) != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil) != nil {
				continue
			}
			s, err := structuralschema.NewStructural(&internal)
			if err != nil {
				continue
			}
			out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = s
		}
	}
	return out
}

// schemaSuggestion returns ` (did you mean "x"?)` when the schema has a
// property close to the unknown field's name at the same place.
func schemaSuggestion(s *structuralschema.Structural, path string) string {
	steps := strings.Split(path, ".")
	for _, step := range steps[:len(steps)-1] {
		name, _, _ := strings.Cut(step, "[")
		if s == nil {
			return ""
		}
		p, ok := s.Properties[name]
		if !ok {
			return ""
		}
		s = &p
		for range strings.Count(step, "[") {
			if s = s.Items; s == nil {
				return ""
			}
		}
	}
	if s == nil {
		return ""
	}
	last, _, _ := strings.Cut(steps[len(steps)-1], "[")
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	if m := load.Closest(last, names); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

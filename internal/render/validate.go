package render

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldError is one field of a rendered object the apiserver would refuse.
type fieldError struct {
	path, msg string
}

// validate checks what overrides can break and every apiserver refuses:
// the name, labels and annotations, the replica count, and each
// container's name and image. It returns the first problem, or nil.
func validate(obj *unstructured.Unstructured) *fieldError {
	name, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "name")
	if s, ok := name.(string); !ok || s == "" {
		return &fieldError{"metadata.name", "must be a non-empty string"}
	} else if msgs := path.IsValidPathSegmentName(s); len(msgs) > 0 {
		return &fieldError{"metadata.name", strings.Join(msgs, "; ")}
	}
	for _, f := range []string{"labels", "annotations"} {
		m, fe := stringMap(obj, f)
		if fe != nil {
			return fe
		}
		p := field.NewPath("metadata", f)
		errs := metav1validation.ValidateLabels(m, p)
		if f == "annotations" {
			errs = apivalidation.ValidateAnnotations(m, p)
		}
		if len(errs) > 0 {
			return &fieldError{errs[0].Field, errs[0].ErrorBody()}
		}
	}
	if v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); found && !nonNegativeInt(v) {
		return &fieldError{"spec.replicas", fmt.Sprintf("must be a non-negative integer, not %v", v)}
	}
	return validateContainers(obj)
}

// stringMap returns metadata.<f> of obj, which must map strings to strings.
func stringMap(obj *unstructured.Unstructured, f string) (map[string]string, *fieldError) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", f)
	if !found || v == nil {
		return nil, nil
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, &fieldError{"metadata." + f, fmt.Sprintf("must be a map of strings, not %T", v)}
	}
	out := make(map[string]string, len(raw))
	for k, x := range raw {
		s, ok := x.(string)
		if !ok {
			return nil, &fieldError{"metadata." + f + "[" + k + "]", fmt.Sprintf("must be a string, not %v", x)}
		}
		out[k] = s
	}
	return out, nil
}

func nonNegativeInt(v any) bool {
	switch n := v.(type) {
	case int64:
		return n >= 0
	case int:
		return n >= 0
	case float64:
		return n >= 0 && n == float64(int64(n))
	}
	return false
}

// validateContainers checks that every container of a workload's pod
// template has a name and a usable image.
func validateContainers(obj *unstructured.Unstructured) *fieldError {
	pod := podSpec(obj)
	if pod == nil {
		return nil
	}
	prefix := strings.Join(podSpecPath(obj), ".")
	for _, kind := range []string{"initContainers", "containers"} {
		items, _ := pod[kind].([]any)
		for i, it := range items {
			at := fmt.Sprintf("%s.%s[%d]", prefix, kind, i)
			c, ok := it.(map[string]any)
			if !ok {
				return &fieldError{at, "must be an object"}
			}
			if n, ok := c["name"].(string); !ok || n == "" {
				return &fieldError{at + ".name", "must be a non-empty string"}
			}
			img, ok := c["image"].(string)
			switch {
			case !ok && c["image"] != nil:
				return &fieldError{at + ".image", fmt.Sprintf("must be a string, not %v", c["image"])}
			case ok && (img == "" || strings.TrimSpace(img) != img || strings.ContainsAny(img, " \t\n")):
				return &fieldError{at + ".image", fmt.Sprintf("%q is not an image reference", img)}
			}
		}
	}
	return nil
}

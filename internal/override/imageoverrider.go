package override

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// image applies one imageOverrider item as one JSON patch of replace
// operations, so the next item sees its result.
func (e *editor) image(o policyv1alpha1.ImageOverrider) error {
	paths, images, err := imageTargets(e.obj, o.Predicate)
	if err != nil {
		return err
	}
	ops := make([]operation, len(paths))
	for i, path := range paths {
		next, err := overrideImage(images[i], o)
		if err != nil {
			return err
		}
		ops[i] = operation{Op: policyv1alpha1.OpReplace, Path: path, Value: encode(next)}
	}
	return e.patch(overriderImage, ops)
}

// imageTargets returns the image fields an imageOverrider edits and their
// values. With a predicate, that is the predicate path alone, on any kind.
// Without one, it is every containers[*].image (never initContainers or
// ephemeralContainers) of a Pod, ReplicaSet, Deployment, DaemonSet,
// StatefulSet or Job; other kinds have none.
func imageTargets(obj *unstructured.Unstructured, predicate *policyv1alpha1.ImagePredicate) ([]string, []string, error) {
	if predicate != nil {
		if len(predicate.Path) == 0 || predicate.Path[0] != '/' {
			return nil, nil, fmt.Errorf("invalid predicate path %q: must start with /", predicate.Path)
		}
		img, err := readString(obj.Object, predicate.Path)
		if err != nil {
			return nil, nil, err
		}
		return []string{predicate.Path}, []string{img}, nil
	}
	prefix, images, err := podSpec(obj)
	if err != nil || prefix == "" {
		return nil, nil, err
	}
	paths := make([]string, len(images))
	for i := range images {
		paths[i] = fmt.Sprintf("%s/containers/%d/image", prefix, i)
	}
	return paths, images, nil
}

// podSpec returns the JSON pointer of the pod spec of the workload kinds
// Karmada's image overrider knows, and that spec's containers' images read
// straight from the object (Karmada converts the whole object to its typed
// form first; reading in place gives the same images at a fraction of the
// cost, but does not reject a wrongly typed field elsewhere in the object).
// Other kinds return an empty prefix.
func podSpec(obj *unstructured.Unstructured) (string, []string, error) {
	prefix := "/spec/template/spec"
	path := []string{"spec", "template", "spec", "containers"}
	switch obj.GetKind() {
	case "Pod":
		prefix, path = "/spec", []string{"spec", "containers"}
	case "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
	default:
		return "", nil, nil
	}
	containers, _, err := unstructured.NestedSlice(obj.Object, path...)
	if err != nil {
		return "", nil, fmt.Errorf("failed to read the containers of %s: %w", obj.GetKind(), err)
	}
	images := make([]string, len(containers))
	for i, c := range containers {
		m, ok := c.(map[string]any)
		if !ok {
			return "", nil, fmt.Errorf("failed to read the containers of %s: container %d is not an object", obj.GetKind(), i)
		}
		images[i], _ = m["image"].(string)
	}
	return prefix, images, nil
}

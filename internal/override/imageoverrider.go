package override

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
	prefix, spec, err := podSpec(obj)
	if err != nil || spec == nil {
		return nil, nil, err
	}
	paths := make([]string, len(spec.Containers))
	images := make([]string, len(spec.Containers))
	for i, c := range spec.Containers {
		paths[i] = fmt.Sprintf("%s/containers/%d/image", prefix, i)
		images[i] = c.Image
	}
	return paths, images, nil
}

// podSpec decodes the pod spec of the workload kinds Karmada's image
// overrider knows, with the JSON pointer of that spec. Like Karmada, it
// converts the whole object to its typed form, so a field of the wrong type
// anywhere in it is an error. Other kinds return a nil spec.
func podSpec(obj *unstructured.Unstructured) (string, *corev1.PodSpec, error) {
	var typed any
	var spec func() *corev1.PodSpec
	prefix := "/spec/template/spec"
	switch obj.GetKind() {
	case "Pod":
		o := &corev1.Pod{}
		typed, spec, prefix = o, func() *corev1.PodSpec { return &o.Spec }, "/spec"
	case "ReplicaSet":
		o := &appsv1.ReplicaSet{}
		typed, spec = o, func() *corev1.PodSpec { return &o.Spec.Template.Spec }
	case "Deployment":
		o := &appsv1.Deployment{}
		typed, spec = o, func() *corev1.PodSpec { return &o.Spec.Template.Spec }
	case "DaemonSet":
		o := &appsv1.DaemonSet{}
		typed, spec = o, func() *corev1.PodSpec { return &o.Spec.Template.Spec }
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		typed, spec = o, func() *corev1.PodSpec { return &o.Spec.Template.Spec }
	case "Job":
		o := &batchv1.Job{}
		typed, spec = o, func() *corev1.PodSpec { return &o.Spec.Template.Spec }
	default:
		return "", nil, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return "", nil, fmt.Errorf("failed to convert %s from unstructured object: %w", obj.GetKind(), err)
	}
	return prefix, spec(), nil
}

package install

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UninstallOptions say what uninstall may remove besides the controller,
// its RBAC and its Secret.
type UninstallOptions struct {
	// Namespace is the installation's (install's --controller-namespace).
	Namespace string
	// DeleteNamespaces also deletes the Namespaces install created, with
	// everything in them: the member credentials in karmada-cluster and
	// whatever else people put there.
	DeleteNamespaces bool
	// DeleteCRDs also deletes the Work CRD, and with it every Work custom
	// resource of every installation on this cluster.
	DeleteCRDs bool
	// DryRun lists, deletes nothing.
	DryRun bool
}

// Step is one object uninstall deleted, would delete or kept, and why.
type Step struct {
	Ref    string
	Action string // "deleted", "would delete" or "kept"
	Why    string
}

// Uninstall deletes what install created in o.Namespace's installation:
// the objects of the kinds install applies that carry
// LabelInstall=o.Namespace, newest first in apply order, so the
// controller stops before its permissions go. Namespaces and the CRD stay
// unless o says otherwise: they hold what install did not create. step is
// called for every object found.
func Uninstall(ctx context.Context, c client.Client, o UninstallOptions, step func(Step)) error {
	kinds, err := installedKinds()
	if err != nil {
		return err
	}
	var found []*unstructured.Unstructured
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := c.List(ctx, list, client.MatchingLabels{LabelInstall: o.Namespace})
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			continue // the kind is not served here (ServiceMonitor without the Prometheus Operator)
		}
		if err != nil {
			return fmt.Errorf("failed to list %s labelled %s=%s: %w", gvk.Kind, LabelInstall, o.Namespace, err)
		}
		for i := range list.Items {
			found = append(found, &list.Items[i])
		}
	}
	for _, u := range slices.Backward(found) {
		s := Step{Ref: ref(u), Action: "deleted"}
		switch {
		case u.GetKind() == "Namespace" && !o.DeleteNamespaces:
			s.Action, s.Why = "kept", "it may hold what install did not create (member credentials, the webhook Secret); --delete-namespaces deletes it with everything in it"
		case u.GetKind() == "CustomResourceDefinition" && !o.DeleteCRDs:
			s.Action, s.Why = "kept", "deleting it deletes every Work custom resource on this cluster, of every installation; --delete-crds deletes it"
		case o.DryRun:
			s.Action = "would delete"
		default:
			err := c.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("failed to delete %s: %w", s.Ref, err)
			}
		}
		step(s)
	}
	return nil
}

// installedKinds are the kinds install can apply, in apply order, with the
// Secret install may create after the Namespaces.
func installedKinds() ([]schema.GroupVersionKind, error) {
	objs, err := kustomize(true, BaseNamespace)
	if err != nil {
		return nil, err
	}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	var kinds []schema.GroupVersionKind
	for _, u := range objs {
		if gvk := u.GroupVersionKind(); !slices.Contains(kinds, gvk) {
			kinds = append(kinds, gvk)
			if gvk.Kind == "Namespace" && !slices.Contains(kinds, secret) {
				kinds = append(kinds, secret)
			}
		}
	}
	return kinds, nil
}

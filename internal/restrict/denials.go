package restrict

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

var admissionKinds = map[string]bool{
	"MutatingWebhookConfiguration.admissionregistration.k8s.io":     true,
	"ValidatingWebhookConfiguration.admissionregistration.k8s.io":   true,
	"MutatingAdmissionPolicy.admissionregistration.k8s.io":          true,
	"MutatingAdmissionPolicyBinding.admissionregistration.k8s.io":   true,
	"ValidatingAdmissionPolicy.admissionregistration.k8s.io":        true,
	"ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io": true,
}

// PropagitNamespaces are where propagit keeps its own identity and keys:
// its ServiceAccounts, Git tokens, age keys (propagit-system, in the hub
// and in every member) and the hub's member credentials (karmada-cluster,
// join.CredentialsNamespace). No commit may place anything there.
var PropagitNamespaces = []string{"propagit-system", "karmada-cluster"}

// propagitNames are the names of propagit's own ServiceAccounts, Secrets
// and RBAC objects (deploy/, internal/join), refused wherever a commit
// puts them, so that a differently named installation namespace still
// keeps them: propagit, propagit-*, sops-age, sops-age-*.
var propagitNames = []string{"propagit", "propagit-*", "sops-age", "sops-age-*"}

var propagitNamedKinds = map[string]bool{
	"ServiceAccount": true, "Secret": true,
	"Role.rbac.authorization.k8s.io": true, "RoleBinding.rbac.authorization.k8s.io": true,
	"ClusterRole.rbac.authorization.k8s.io": true, "ClusterRoleBinding.rbac.authorization.k8s.io": true,
}

// propagitTarget refuses an object in, or naming, propagit's namespaces, and
// one of propagit's ServiceAccounts, Secrets or roles by name.
func propagitTarget(obj *unstructured.Unstructured) *Refusal {
	refuse := func(path, why string) *Refusal {
		return &Refusal{Rule: DenyPropagitSystem, Path: path, Message: fmt.Sprintf("%s %s, where propagit keeps its own identity and keys; "+
			"the restriction policy denies it unless it allows %q", obj.GetKind(), why, DenyPropagitSystem)}
	}
	gk := groupKind(obj)
	if ns := obj.GetNamespace(); slices.Contains(PropagitNamespaces, ns) {
		return refuse("metadata.namespace", "is in propagit's namespace "+ns)
	}
	if gk == "Namespace" && slices.Contains(PropagitNamespaces, obj.GetName()) {
		return refuse("metadata.name", "is propagit's namespace "+obj.GetName())
	}
	if propagitNamedKinds[gk] && matchAny(propagitNames, obj.GetName()) {
		return refuse("metadata.name", fmt.Sprintf("takes the name %q of one of propagit's own objects", obj.GetName()))
	}
	return nil
}

// SystemNamespaces are the control plane's namespaces, where
// DenySystemNamespaces applies.
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// systemTarget refuses, in SystemNamespaces, what runs as, mints for or
// grants to the control plane's ServiceAccounts: pod specs, token Secrets
// and RBAC objects.
func (p *Policy) systemTarget(obj *unstructured.Unstructured) *Refusal {
	ns := obj.GetNamespace()
	if !slices.Contains(SystemNamespaces, ns) {
		return nil
	}
	gk := groupKind(obj)
	why := ""
	switch {
	case len(p.podSpecPaths(gk)) > 0:
		why = "runs pods there, which may run as any of the control plane's ServiceAccounts"
	case gk == "Secret" && obj.Object["type"] == "kubernetes.io/service-account-token":
		why = "asks for a token of one of the control plane's ServiceAccounts"
	case isRBAC(gk) != "":
		why = "grants within the control plane's namespace"
	default:
		return nil
	}
	return &Refusal{Rule: DenySystemNamespaces, Path: "metadata.namespace", Message: fmt.Sprintf("%s in %s %s; "+
		"the restriction policy denies it unless it allows %q", obj.GetKind(), ns, why, DenySystemNamespaces)}
}

// apiExtension refuses what serves or rewrites requests for a whole API:
// an aggregated APIService, and a CRD whose versions convert through a
// webhook (the webhook sees every object of the kind, Secrets in them
// included, and can answer with anything).
func apiExtension(obj *unstructured.Unstructured) *Refusal {
	switch groupKind(obj) {
	case "APIService.apiregistration.k8s.io":
		return &Refusal{Rule: DenyAPIExtensions, Message: fmt.Sprintf("APIService hands a whole API group of the member to a server of the committer's choice; "+
			"the restriction policy denies it unless it allows %q", DenyAPIExtensions)}
	case "CustomResourceDefinition.apiextensions.k8s.io":
		if s, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy"); s != "" && s != "None" {
			return &Refusal{Rule: DenyAPIExtensions, Path: "spec.conversion", Message: fmt.Sprintf("CustomResourceDefinition converts through a webhook (strategy %q), "+
				"which sees and rewrites every object of the kind; the restriction policy denies it unless it allows %q", s, DenyAPIExtensions)}
		}
	}
	return nil
}

// adoption refuses conflictResolution Overwrite on a Namespace, a CRD or
// any cluster-scoped object: it takes over an object propagit did not
// create, which a later prune would then delete with all it holds.
func (p *Policy) adoption(obj *unstructured.Unstructured) *Refusal {
	if obj.GetAnnotations()[workv1alpha1.AnnotationConflict] != workv1alpha1.ConflictOverwrite {
		return nil
	}
	gk := groupKind(obj)
	if p.namespaced(gk) && obj.GetNamespace() != "" {
		return nil
	}
	return &Refusal{Rule: DenyAdoption, Path: "metadata.annotations", Message: fmt.Sprintf("%s %s is taken over from its present owner "+
		"(conflictResolution Overwrite), and could be pruned later with all it holds; the restriction policy denies it for Namespaces, "+
		"CRDs and cluster-scoped objects unless it allows %q", obj.GetKind(), obj.GetName(), DenyAdoption)}
}

// isRBAC reports whether gk is a role ("role") or a binding ("binding").
func isRBAC(gk string) string {
	kind, group, _ := strings.Cut(gk, ".")
	if group != "rbac.authorization.k8s.io" {
		return ""
	}
	switch kind {
	case "Role", "ClusterRole":
		return "role"
	case "RoleBinding", "ClusterRoleBinding":
		return "binding"
	}
	return ""
}

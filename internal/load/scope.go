package load

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clusterScopedKinds are the cluster-scoped kinds propagit knows without a
// CustomResourceDefinition: Kubernetes' own, Karmada's, and a few widely
// installed add-ons. Versions do not matter.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                    true,
	{Group: "", Kind: "Node"}:                                                         true,
	{Group: "", Kind: "PersistentVolume"}:                                             true,
	{Group: "", Kind: "ComponentStatus"}:                                              true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:                       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
	{Group: "policy", Kind: "PodSecurityPolicy"}:                                      true,
	{Group: "cluster.karmada.io", Kind: "Cluster"}:                                    true,
	{Group: "policy.karmada.io", Kind: "ClusterPropagationPolicy"}:                    true,
	{Group: "policy.karmada.io", Kind: "ClusterOverridePolicy"}:                       true,
	{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}:                        true,
	{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshotClass"}:                   true,
	{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshotContent"}:                 true,
	{Group: "cert-manager.io", Kind: "ClusterIssuer"}:                                 true,
	{Group: "kyverno.io", Kind: "ClusterPolicy"}:                                      true,
	{Group: "templates.gatekeeper.sh", Kind: "ConstraintTemplate"}:                    true,
	{Group: "scheduling.volcano.sh", Kind: "Queue"}:                                   true,
}

// ClusterScoped reports whether objects of gvk are cluster-scoped: a kind
// propagit knows to be cluster-scoped, or a kind that one of crds (objects
// of kind apiextensions.k8s.io CustomResourceDefinition; others are
// ignored) declares with spec.scope Cluster. Everything else is namespaced.
func ClusterScoped(gvk schema.GroupVersionKind, crds ...*unstructured.Unstructured) bool {
	if clusterScopedKinds[gvk.GroupKind()] {
		return true
	}
	for _, crd := range crds {
		if gk, scope, ok := crdScope(crd); ok && gk == gvk.GroupKind() {
			return scope == "Cluster"
		}
	}
	return false
}

// ClusterScoped reports whether objects of gvk are cluster-scoped, taking
// into account the CustomResourceDefinitions among the set's templates.
func (s *Set) ClusterScoped(gvk schema.GroupVersionKind) bool {
	return scopesOf(s.Templates).clusterScoped(gvk.GroupKind())
}

// crdScope reads the kind and scope a CustomResourceDefinition declares.
func crdScope(obj *unstructured.Unstructured) (schema.GroupKind, string, bool) {
	if obj == nil {
		return schema.GroupKind{}, "", false
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
		return schema.GroupKind{}, "", false
	}
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
	if kind == "" {
		return schema.GroupKind{}, "", false
	}
	return schema.GroupKind{Group: group, Kind: kind}, scope, true
}

// scopes answers scope questions for one set of templates.
type scopes map[schema.GroupKind]bool

func scopesOf(templates []Template) scopes {
	s := scopes{}
	for _, t := range templates {
		if gk, scope, ok := crdScope(t.Object); ok {
			s[gk] = scope == "Cluster"
		}
	}
	return s
}

func (s scopes) clusterScoped(gk schema.GroupKind) bool {
	return clusterScopedKinds[gk] || s[gk]
}

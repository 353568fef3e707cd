package load

import (
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Names, namespaces, kinds and API groups become paths: files of a render
// and tree entries of the work branch. They are held to the rules the API
// server applies, so that nothing that loads can name "..", ".git" or a
// path with a slash.

// pathSegmentKinds are the kinds whose names the API server checks only as
// path segments (no "/", no "%", not "." or ".."), such as RBAC's
// "system:controller:…" roles. Every other name must be a DNS-1123
// subdomain, as custom resources' and most built-in kinds' names are.
var pathSegmentKinds = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// labelNameKinds are the built-in kinds whose names are DNS-1123 labels.
var labelNameKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true,
	{Kind: "Service"}:   true,
}

// identityIssues checks a template's apiVersion, kind, name and namespace
// (namespace may be empty: defaulted later).
func identityIssues(gvk schema.GroupVersionKind, name, namespace string) []issue {
	c := &checker{}
	if gvk.Group != "" {
		c.messages("apiVersion", gvk.Group, prefixed("group", content.IsDNS1123Subdomain(gvk.Group)))
	}
	c.messages("apiVersion", gvk.Version, prefixed("version", validation.IsDNS1035Label(gvk.Version)))
	// A kind is an identifier: its lower-case form must be a DNS-1035 label,
	// as the API server requires of a CustomResourceDefinition's kind.
	c.messages("kind", gvk.Kind, validation.IsDNS1035Label(strings.ToLower(gvk.Kind)))
	if name != "" {
		c.messages("metadata.name", name, nameMessages(gvk.GroupKind(), name))
	}
	if namespace != "" {
		c.messages("metadata.namespace", namespace, content.IsDNS1123Label(namespace))
	}
	return c.issues
}

// nameMessages validates name as the API server would for kind gk.
func nameMessages(gk schema.GroupKind, name string) []string {
	switch {
	case labelNameKinds[gk]:
		return content.IsDNS1123Label(name)
	case pathSegmentKinds[gk]:
		msgs := content.IsPathSegmentName(name)
		if len(name) > validation.DNS1123SubdomainMaxLength {
			msgs = append(msgs, content.MaxLenError(validation.DNS1123SubdomainMaxLength))
		}
		if strings.ContainsFunc(name, unicode.IsControl) {
			msgs = append(msgs, "must not contain control characters")
		}
		return msgs
	default:
		return content.IsDNS1123Subdomain(name)
	}
}

func prefixed(what string, msgs []string) []string {
	for i, m := range msgs {
		msgs[i] = what + " " + m
	}
	return msgs
}

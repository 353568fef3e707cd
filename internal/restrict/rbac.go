package restrict

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Bindings and roles are judged by what they hand out, the way the
// apiserver's escalation check would judge them for a user who holds less
// than propagit: the apiserver lets propagit's ServiceAccount bind any
// role whose permissions it holds itself, and it holds nearly everything.

// powerfulRoles are built-in roles no commit may bind: cluster-admin, and
// admin and edit, which read Secrets and impersonate ServiceAccounts.
var powerfulRoles = []string{"cluster-admin", "admin", "edit", "system:*", "propagit*"}

// bindingRefusal refuses a RoleBinding or ClusterRoleBinding of a powerful
// or propagit role, or to a built-in or propagit identity.
func bindingRefusal(obj *unstructured.Unstructured) *Refusal {
	refuse := func(path, why string) *Refusal {
		return &Refusal{Rule: DenyAdminBindings, Path: path, Message: fmt.Sprintf("%s %s; the restriction policy denies it unless it allows %q",
			obj.GetKind(), why, DenyAdminBindings)}
	}
	if name, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name"); matchAny(powerfulRoles, name) {
		return refuse("roleRef.name", fmt.Sprintf("grants the role %q (built-in powerful roles and propagit's own roles are never bound by a commit)", name))
	}
	subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
	for i, s := range subjects {
		m, _ := s.(map[string]any)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if why := reservedSubject(kind, name, ns); why != "" {
			return refuse(fmt.Sprintf("subjects[%d]", i), "grants to "+why)
		}
	}
	return nil
}

// reservedSubject says why a subject is off limits, "" when it is not:
// built-in users and groups (system:*, which name every caller, every
// ServiceAccount, the nodes and the superusers) and propagit's own
// ServiceAccounts.
func reservedSubject(kind, name, ns string) string {
	switch {
	case (kind == "User" || kind == "Group") && strings.HasPrefix(name, "system:"):
		return fmt.Sprintf("the built-in %s %s", kind, name)
	case kind == "ServiceAccount" && slices.Contains(PropagitNamespaces, ns):
		return "propagit's " + workv1alpha1.ObjectKey{Kind: kind, Namespace: ns, Name: name}.Display()
	}
	return ""
}

// perm is a permission a role must not grant: verbs on resources of
// groups; clusterOnly when a Role may grant it inside its namespace.
type perm struct {
	groups, resources, verbs []string
	clusterOnly              bool
	why                      string
}

// escalations are the permissions that let their holder grant or take more
// than they hold: the list the package doc and the README name.
var escalations = []perm{
	{groups: []string{"rbac.authorization.k8s.io"}, resources: []string{"roles", "clusterroles"}, verbs: []string{"escalate", "bind"},
		why: "lets its holder grant what it does not hold"},
	{groups: []string{"", "authentication.k8s.io"}, resources: []string{"users", "groups", "serviceaccounts", "uids", "userextras"}, verbs: []string{"impersonate"},
		why: "lets its holder act as another identity"},
	{groups: []string{""}, resources: []string{"serviceaccounts/token"}, verbs: []string{"create"},
		why: "mints tokens of other ServiceAccounts"},
	{groups: []string{"certificates.k8s.io"}, resources: []string{"signers"}, verbs: []string{"approve", "sign"},
		why: "issues client certificates for any identity"},
	{groups: []string{""}, resources: []string{"secrets"}, verbs: []string{"get", "list", "watch"}, clusterOnly: true,
		why: "reads every Secret, ServiceAccount tokens included"},
	{groups: []string{""}, resources: []string{"nodes/proxy"}, verbs: []string{"get", "create", "update", "patch", "delete"}, clusterOnly: true,
		why: "reaches every kubelet's API"},
	{groups: []string{""}, resources: []string{"pods/exec", "pods/attach", "pods/ephemeralcontainers"}, verbs: []string{"get", "create", "update", "patch"}, clusterOnly: true,
		why: "runs commands in every pod, system pods included"},
}

// roleRefusal refuses a Role or ClusterRole that grants an escalation, a
// wildcard verb or resource, or aggregates rules it cannot show.
func roleRefusal(obj *unstructured.Unstructured) *Refusal {
	refuse := func(path, why string) *Refusal {
		return &Refusal{Rule: DenyRBACEscalation, Path: path, Message: fmt.Sprintf("%s %s; the restriction policy denies it unless it allows %q",
			obj.GetKind(), why, DenyRBACEscalation)}
	}
	cluster := obj.GetKind() == "ClusterRole"
	if _, found := obj.Object["aggregationRule"]; found && cluster {
		return refuse("aggregationRule", "aggregates the rules of other ClusterRoles, which this check cannot see")
	}
	for k := range obj.GetLabels() {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			return refuse("metadata.labels", fmt.Sprintf("adds its rules to a built-in role through the label %s", k))
		}
	}
	rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
	for i, r := range rules {
		m, _ := r.(map[string]any)
		at := fmt.Sprintf("rules[%d]", i)
		verbs, resources, groups := strs(m["verbs"]), strs(m["resources"]), strs(m["apiGroups"])
		if slices.Contains(verbs, "*") {
			return refuse(at+".verbs", "grants every verb, escalate, bind and impersonate included")
		}
		for _, res := range resources {
			if strings.Contains(res, "*") {
				return refuse(at+".resources", fmt.Sprintf("grants the wildcard %q, which covers every resource and subresource (tokens, exec, proxy)", res))
			}
		}
		if urls := strs(m["nonResourceURLs"]); slices.Contains(urls, "*") {
			return refuse(at+".nonResourceURLs", "grants every non-resource URL (the kubelet and apiserver logs and debug endpoints included)")
		}
		for _, e := range escalations {
			if e.clusterOnly && !cluster {
				continue
			}
			if v, res, ok := e.grantedBy(groups, resources, verbs); ok {
				return refuse(at, fmt.Sprintf("grants %s on %s, which %s", v, res, e.why))
			}
		}
	}
	return nil
}

// grantedBy reports the first verb and resource of e a rule grants.
func (e perm) grantedBy(groups, resources, verbs []string) (string, string, bool) {
	if !slices.Contains(groups, "*") && !slices.ContainsFunc(e.groups, func(g string) bool { return slices.Contains(groups, g) }) {
		return "", "", false
	}
	for _, res := range e.resources {
		if !slices.Contains(resources, res) {
			continue
		}
		for _, v := range e.verbs {
			if slices.Contains(verbs, v) {
				return v, res, true
			}
		}
	}
	return "", "", false
}

// strs reads a YAML list of strings, skipping what is not a string.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s, ok := s.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Package restrict is the restriction policy: what the operators of a
// propagit installation let committers deploy. It lives outside the fleet
// repository (a file the controller and the CLI read with --restrictions),
// so no commit can widen it — the role Argo CD's AppProject plays.
//
// Check judges each object as it will be applied. By default it refuses
// what hands out power over the member beyond the object itself:
//
//   - RBAC judged as escalation (rbac.go): bindings of built-in powerful
//     roles or of propagit's own roles, or to built-in or propagit
//     identities; roles that grant wildcards, escalate, bind, impersonate,
//     token minting, certificate approval, or (cluster-wide) Secrets,
//     nodes/proxy and exec; aggregated ClusterRoles. The apiserver's own
//     check does not help here: propagit's ServiceAccount holds nearly
//     every permission, so the apiserver lets it bind nearly anything.
//   - Pod Security Standards (podsecurity.go), baseline unless the policy
//     says restricted or privileged, on every pod spec of every kind in
//     DefaultPodSpecPaths and the policy's PodSpecPaths, in every
//     namespace, and on hostPath PersistentVolumes.
//   - Admission webhooks and policies, APIServices, CRDs with conversion
//     webhooks, anything in or naming propagit's namespaces, Secrets,
//     ServiceAccounts and roles, pods, token Secrets and RBAC in the
//     control plane's namespaces (kube-system, …), and adoption
//     (conflictResolution Overwrite) of Namespaces, CRDs and
//     cluster-scoped objects (denials.go).
//
// Allow lifts a denial by name. Allow lists of namespaces (Namespace
// objects included) and cluster-scoped kinds narrow it further; a kind not
// known to be namespaced (scope.go) counts as cluster-scoped. A refused
// object is a render error: its member keeps what it runs, and lint and
// diff say why, naming the rule and the field.
package restrict

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The built-in denials, by the name Allow lifts them with.
const (
	// DenyAdminBindings refuses a RoleBinding or ClusterRoleBinding of a
	// built-in powerful role (cluster-admin, admin, edit, system:*) or of
	// one of propagit's own roles (propagit*), and one that grants to a
	// built-in user or group (system:*) or to a ServiceAccount in one of
	// PropagitNamespaces.
	DenyAdminBindings = "admin-bindings"
	// DenyRBACEscalation refuses a Role or ClusterRole that grants a
	// wildcard verb or resource, escalate or bind on roles, impersonate,
	// serviceaccounts/token, or approve on signers; a ClusterRole that
	// grants, cluster-wide, reads of Secrets, nodes/proxy, or pods/exec,
	// attach or ephemeralcontainers; and a ClusterRole that aggregates or
	// is labelled to be aggregated (rbac.authorization.k8s.io/aggregate-to-*).
	DenyRBACEscalation = "rbac-escalation"
	// DenyAdmissionWebhooks refuses admission webhook configurations and
	// admission policies: they see or change every request of a member.
	DenyAdmissionWebhooks = "admission-webhooks"
	// DenyAPIExtensions refuses APIServices (aggregated APIs) and CRDs
	// that convert through a webhook: both hand a whole API to a server.
	DenyAPIExtensions = "api-extensions"
	// DenyPropagitSystem refuses anything in PropagitNamespaces, those
	// Namespaces themselves, and ServiceAccounts, Secrets and RBAC objects
	// named like propagit's own (propagit, propagit-*, sops-age*).
	DenyPropagitSystem = "propagit-system"
	// DenySystemNamespaces refuses pod specs, ServiceAccount token Secrets
	// and RBAC objects in SystemNamespaces: a pod there may run as any of
	// the control plane's ServiceAccounts, some of which hold escalate.
	DenySystemNamespaces = "system-namespaces"
	// DenyAdoption refuses conflictResolution Overwrite (the annotation
	// work.karmada.io/conflict-resolution: overwrite) on Namespaces, CRDs
	// and every other cluster-scoped object.
	DenyAdoption = "adoption"
)

// denials are the names Allow accepts.
var denials = []string{DenyAdminBindings, DenyRBACEscalation, DenyAdmissionWebhooks, DenyAPIExtensions, DenyPropagitSystem,
	DenySystemNamespaces, DenyAdoption}

// Policy says what may be deployed.
type Policy struct {
	// Namespaces are the namespaces templates may live in (and the
	// Namespace objects they may create), as path.Match patterns
	// ("team-*"); empty allows every namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	// ClusterScopedKinds are the cluster-scoped kinds that may be
	// deployed, as "Kind.group" ("ClusterRole.rbac.authorization.k8s.io",
	// "Namespace" for the core group) or "*"; empty allows every kind. A
	// kind not known to be namespaced counts as cluster-scoped.
	ClusterScopedKinds []string `json:"clusterScopedKinds,omitempty"`
	// NamespacedKinds are custom kinds, as "Kind.group", that live in a
	// namespace, beyond the built-in and common ones this package knows.
	NamespacedKinds []string `json:"namespacedKinds,omitempty"`
	// Allow lifts built-in denials by name (DenyAdminBindings, …).
	Allow []string `json:"allow,omitempty"`
	// PodSecurity is the Pod Security Standards level every pod spec must
	// meet, in every namespace: baseline (the default), restricted, or
	// privileged (no check).
	PodSecurity string `json:"podSecurity,omitempty"`
	// PodSpecPaths are further kinds that carry pod specs, added to
	// DefaultPodSpecPaths.
	PodSpecPaths []PodSpecPath `json:"podSpecPaths,omitempty"`
	// Folders narrow the namespaces, cluster-scoped kinds and pod security
	// further for the templates loaded from a folder of the fleet (a
	// team's folder): such a template must pass both the policy's rules and
	// those of the deepest folder that holds it.
	Folders []Folder `json:"folders,omitempty"`
}

// Folder is a restriction for the templates of one folder of the fleet.
type Folder struct {
	// Path is a slash-separated folder relative to the fleet's root
	// ("teams/shop"); it holds every file below it.
	Path               string   `json:"path"`
	Namespaces         []string `json:"namespaces,omitempty"`
	ClusterScopedKinds []string `json:"clusterScopedKinds,omitempty"`
	// PodSecurity applies when it is stricter than the policy's.
	PodSecurity string `json:"podSecurity,omitempty"`
}

// Refusal is why an object may not be deployed.
type Refusal struct {
	// Rule is the denial or allow list that refused it.
	Rule string
	// Path is the field that decided ("" for the object as a whole).
	Path    string
	Message string
}

func (r *Refusal) Error() string {
	if r.Path == "" {
		return r.Message
	}
	return r.Path + ": " + r.Message
}

// Load reads a policy file (YAML or JSON); unknown fields, denials and
// levels are an error, so a typo never widens what is allowed by being
// ignored.
func Load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("failed to read the restriction policy: %w", err)
	}
	p := &Policy{}
	if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), p); err != nil {
		return nil, fmt.Errorf("restriction policy %s: %w", file, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("restriction policy %s: %w", file, err)
	}
	return p, nil
}

// validate checks the names, levels, paths and patterns of a loaded
// policy, and cleans its folders' paths.
func (p *Policy) validate() error {
	for i, a := range p.Allow {
		if a == "privileged-system-pods" {
			return fmt.Errorf("allow[%d]: %q is gone: every namespace is held to podSecurity (baseline by default); set podSecurity: privileged to lift it", i, a)
		}
		if !slices.Contains(denials, a) {
			return fmt.Errorf("allow[%d]: unknown denial %q (known: %s)", i, a, strings.Join(denials, ", "))
		}
	}
	if !validLevel(p.PodSecurity) {
		return fmt.Errorf("podSecurity: unknown level %q (known: privileged, baseline, restricted)", p.PodSecurity)
	}
	for i, s := range p.PodSpecPaths {
		if s.Kind == "" || s.Path == "" || strings.Contains(s.Path, "..") || strings.HasPrefix(s.Path, ".") || strings.HasSuffix(s.Path, ".") {
			return fmt.Errorf("podSpecPaths[%d]: want a kind (Kind.group) and a dot-separated path such as spec.template.spec", i)
		}
	}
	lists := [][]string{p.Namespaces, p.ClusterScopedKinds}
	for i, f := range p.Folders {
		clean := path.Clean(f.Path)
		if f.Path == "" || path.IsAbs(f.Path) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("folders[%d].path %q must be a folder inside the fleet, such as teams/shop", i, f.Path)
		}
		if !validLevel(f.PodSecurity) {
			return fmt.Errorf("folders[%d].podSecurity: unknown level %q (known: privileged, baseline, restricted)", i, f.PodSecurity)
		}
		p.Folders[i].Path = clean
		lists = append(lists, f.Namespaces, f.ClusterScopedKinds)
	}
	for _, list := range lists {
		for _, pat := range list {
			if _, err := path.Match(pat, ""); err != nil {
				return fmt.Errorf("bad pattern %q: %w", pat, err)
			}
		}
	}
	return nil
}

// Check returns why obj, loaded from the file at source (slash-separated,
// relative to the fleet's root; "" when unknown), may not be deployed, nil
// when it may. obj is the object as it will be applied, after overrides.
// A nil Policy is the default one.
func (p *Policy) Check(obj *unstructured.Unstructured, source string) *Refusal {
	if p == nil {
		p = &Policy{}
	}
	if r := p.checkScope(obj, p.Namespaces, p.ClusterScopedKinds, ""); r != nil {
		return r
	}
	f := p.folder(source)
	if f != nil {
		if r := p.checkScope(obj, f.Namespaces, f.ClusterScopedKinds, " for folder "+f.Path); r != nil {
			r.Rule = "folders"
			return r
		}
	}
	if r := p.denials(obj); r != nil {
		return r
	}
	if r := p.podSecurity(obj, p.PodSecurity, RulePodSecurity); r != nil || f == nil || !stricter(f.PodSecurity, p.PodSecurity) {
		return r
	}
	if r := p.podSecurity(obj, f.PodSecurity, "folders"); r != nil {
		r.Message += " (the level of folder " + f.Path + ")"
		return r
	}
	return nil
}

// denials runs the built-in denials the policy does not lift.
func (p *Policy) denials(obj *unstructured.Unstructured) *Refusal {
	gk := groupKind(obj)
	checks := []struct {
		name  string
		check func() *Refusal
	}{
		{DenyPropagitSystem, func() *Refusal { return propagitTarget(obj) }},
		{DenySystemNamespaces, func() *Refusal { return p.systemTarget(obj) }},
		{DenyAdminBindings, func() *Refusal { return when(isRBAC(gk) == "binding", bindingRefusal, obj) }},
		{DenyRBACEscalation, func() *Refusal { return when(isRBAC(gk) == "role", roleRefusal, obj) }},
		{DenyAdmissionWebhooks, func() *Refusal { return when(admissionKinds[gk], admissionRefusal, obj) }},
		{DenyAPIExtensions, func() *Refusal { return apiExtension(obj) }},
		{DenyAdoption, func() *Refusal { return p.adoption(obj) }},
	}
	for _, c := range checks {
		if p.allows(c.name) {
			continue
		}
		if r := c.check(); r != nil {
			return r
		}
	}
	return nil
}

func when(cond bool, check func(*unstructured.Unstructured) *Refusal, obj *unstructured.Unstructured) *Refusal {
	if !cond {
		return nil
	}
	return check(obj)
}

func admissionRefusal(obj *unstructured.Unstructured) *Refusal {
	return &Refusal{Rule: DenyAdmissionWebhooks, Message: fmt.Sprintf("%s sees or changes every request of the member; "+
		"the restriction policy denies it unless it allows %q", obj.GetKind(), DenyAdmissionWebhooks)}
}

// checkScope checks obj's namespace (a Namespace's own name) and, unless
// its kind is known to be namespaced, its kind against the allowed
// patterns (empty allows all); where says whose rules they are.
func (p *Policy) checkScope(obj *unstructured.Unstructured, namespaces, kinds []string, where string) *Refusal {
	gk := groupKind(obj)
	ns, at := obj.GetNamespace(), "metadata.namespace"
	if gk == "Namespace" {
		ns, at = obj.GetName(), "metadata.name"
	}
	if ns != "" && len(namespaces) > 0 && !matchAny(namespaces, ns) {
		return &Refusal{Rule: "namespaces", Path: at,
			Message: fmt.Sprintf("namespace %q is not among the namespaces the restriction policy allows%s (%s)", ns, where, strings.Join(namespaces, ", "))}
	}
	if (obj.GetNamespace() == "" || !p.namespaced(gk)) && len(kinds) > 0 && !matchAny(kinds, gk) {
		what := "cluster-scoped kind " + gk
		if obj.GetNamespace() != "" {
			what = "kind " + gk + ", not known to be namespaced and so judged as cluster-scoped (namespacedKinds declares it),"
		}
		return &Refusal{Rule: "clusterScopedKinds", Path: "kind",
			Message: fmt.Sprintf("%s is not among the cluster-scoped kinds the restriction policy allows%s (%s)", what, where, strings.Join(kinds, ", "))}
	}
	return nil
}

// folder returns the deepest folder rule holding the file at source.
func (p *Policy) folder(source string) *Folder {
	var best *Folder
	for i, f := range p.Folders {
		if strings.HasPrefix(source, f.Path+"/") && (best == nil || len(f.Path) > len(best.Path)) {
			best = &p.Folders[i]
		}
	}
	return best
}

func (p *Policy) allows(denial string) bool { return slices.Contains(p.Allow, denial) }

// Allows reports whether the policy lifts the built-in denial.
func (p *Policy) Allows(denial string) bool { return p != nil && p.allows(denial) }

// groupKind is "Kind.group", or "Kind" for the core group.
func groupKind(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// Package restrict is the restriction policy: what the operators of a
// propagit installation let committers deploy. It lives outside the fleet
// repository (a file the controller and the CLI read with --restrictions),
// so no commit can widen it — the role Argo CD's AppProject plays.
//
// By default it denies what hands out cluster-wide power: bindings of
// cluster-admin or of built-in groups (system:authenticated, …), admission
// webhooks and policies, and privileged or host-namespace pods in system
// namespaces. Allow lists of namespaces and cluster-scoped kinds narrow it
// further. A refused object is a render error: its member keeps what it
// runs, and lint and diff say why.
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
	// DenyAdminBindings refuses a RoleBinding or ClusterRoleBinding that
	// grants cluster-admin, or grants anything to a built-in group or user
	// (system:authenticated, system:unauthenticated, system:anonymous,
	// system:masters, system:serviceaccounts).
	DenyAdminBindings = "admin-bindings"
	// DenyAdmissionWebhooks refuses admission webhook configurations and
	// admission policies: they see or change every request of a member.
	DenyAdmissionWebhooks = "admission-webhooks"
	// DenyPrivilegedSystemPods refuses pods (and pod templates) in system
	// namespaces that run privileged, share the host's PID, IPC or network
	// namespace, or mount a host path.
	DenyPrivilegedSystemPods = "privileged-system-pods"
)

// Policy says what may be deployed.
type Policy struct {
	// Namespaces are the namespaces templates may live in, as path.Match
	// patterns ("team-*"); empty allows every namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	// ClusterScopedKinds are the cluster-scoped kinds that may be
	// deployed, as "Kind.group" ("ClusterRole.rbac.authorization.k8s.io",
	// "Namespace" for the core group) or "*"; empty allows every kind.
	ClusterScopedKinds []string `json:"clusterScopedKinds,omitempty"`
	// Allow lifts built-in denials by name (DenyAdminBindings, …).
	Allow []string `json:"allow,omitempty"`
	// SystemNamespaces are where DenyPrivilegedSystemPods applies, as
	// path.Match patterns; empty means DefaultSystemNamespaces.
	SystemNamespaces []string `json:"systemNamespaces,omitempty"`
	// Folders narrow the namespaces and cluster-scoped kinds further for
	// the templates loaded from a folder of the fleet (a team's folder):
	// such a template must pass both the policy's rules and those of the
	// deepest folder that holds it.
	Folders []Folder `json:"folders,omitempty"`
}

// Folder is a restriction for the templates of one folder of the fleet.
type Folder struct {
	// Path is a slash-separated folder relative to the fleet's root
	// ("teams/shop"); it holds every file below it.
	Path               string   `json:"path"`
	Namespaces         []string `json:"namespaces,omitempty"`
	ClusterScopedKinds []string `json:"clusterScopedKinds,omitempty"`
}

// DefaultSystemNamespaces are the namespaces of the platform itself.
var DefaultSystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", "propagit-system", "karmada-*"}

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

// Load reads a policy file (YAML or JSON); unknown fields are an error, so
// a typo never widens what is allowed by being ignored.
func Load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("failed to read the restriction policy: %w", err)
	}
	p := &Policy{}
	if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), p); err != nil {
		return nil, fmt.Errorf("restriction policy %s: %w", file, err)
	}
	for _, a := range p.Allow {
		if !slices.Contains([]string{DenyAdminBindings, DenyAdmissionWebhooks, DenyPrivilegedSystemPods}, a) {
			return nil, fmt.Errorf("restriction policy %s: allow: unknown denial %q (known: %s, %s, %s)", file, a,
				DenyAdminBindings, DenyAdmissionWebhooks, DenyPrivilegedSystemPods)
		}
	}
	lists := [][]string{p.Namespaces, p.ClusterScopedKinds, p.SystemNamespaces}
	for i, f := range p.Folders {
		clean := path.Clean(f.Path)
		if f.Path == "" || path.IsAbs(f.Path) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("restriction policy %s: folders[%d].path %q must be a folder inside the fleet, such as teams/shop", file, i, f.Path)
		}
		p.Folders[i].Path = clean
		lists = append(lists, f.Namespaces, f.ClusterScopedKinds)
	}
	for _, list := range lists {
		for _, pat := range list {
			if _, err := path.Match(pat, ""); err != nil {
				return nil, fmt.Errorf("restriction policy %s: bad pattern %q: %w", file, pat, err)
			}
		}
	}
	return p, nil
}

// Check returns why obj, loaded from the file at source (slash-separated,
// relative to the fleet's root; "" when unknown), may not be deployed, nil
// when it may. A nil Policy is the default one.
func (p *Policy) Check(obj *unstructured.Unstructured, source string) *Refusal {
	if p == nil {
		p = &Policy{}
	}
	if r := checkScope(obj, p.Namespaces, p.ClusterScopedKinds, ""); r != nil {
		return r
	}
	if f := p.folder(source); f != nil {
		if r := checkScope(obj, f.Namespaces, f.ClusterScopedKinds, " for folder "+f.Path); r != nil {
			r.Rule = "folders"
			return r
		}
	}
	if !p.allows(DenyAdminBindings) {
		if r := adminBinding(obj); r != nil {
			return r
		}
	}
	if !p.allows(DenyAdmissionWebhooks) && admissionKinds[groupKind(obj)] {
		return &Refusal{Rule: DenyAdmissionWebhooks, Message: fmt.Sprintf("%s sees or changes every request of the member; "+
			"the restriction policy denies it unless it allows %q", obj.GetKind(), DenyAdmissionWebhooks)}
	}
	if !p.allows(DenyPrivilegedSystemPods) && matchAny(p.systemNamespaces(), obj.GetNamespace()) {
		if r := privilegedPod(obj); r != nil {
			return r
		}
	}
	return nil
}

// checkScope checks obj's namespace or cluster-scoped kind against the
// allowed patterns (empty allows all); where says whose rules they are.
func checkScope(obj *unstructured.Unstructured, namespaces, kinds []string, where string) *Refusal {
	if ns := obj.GetNamespace(); ns != "" && len(namespaces) > 0 && !matchAny(namespaces, ns) {
		return &Refusal{Rule: "namespaces", Path: "metadata.namespace",
			Message: fmt.Sprintf("namespace %q is not among the namespaces the restriction policy allows%s (%s)", ns, where, strings.Join(namespaces, ", "))}
	}
	if obj.GetNamespace() == "" && len(kinds) > 0 && !matchAny(kinds, groupKind(obj)) {
		return &Refusal{Rule: "clusterScopedKinds", Path: "kind",
			Message: fmt.Sprintf("cluster-scoped kind %s is not among those the restriction policy allows%s (%s)", groupKind(obj), where,
				strings.Join(kinds, ", "))}
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

func (p *Policy) systemNamespaces() []string {
	if len(p.SystemNamespaces) > 0 {
		return p.SystemNamespaces
	}
	return DefaultSystemNamespaces
}

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

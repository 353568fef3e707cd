package restrict

import (
	"fmt"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Declaration is a policy-like object of the fleet: it changes what other
// files' templates become rather than being deployed itself.
type Declaration struct {
	// Kind and Group name it: "OverridePolicy", "policy.karmada.io".
	Kind, Group string
	// Namespace is "" for a cluster-scoped one.
	Namespace string
	// Name and Source (slash-separated, relative to the fleet's root)
	// locate it for messages and folder rules.
	Name, Source string
}

// The kinds the folder rules treat apart.
const (
	kindCustomization = "ResourceInterpreterCustomization"
)

// fleetKinds declare the fleet itself, not a team's part of it.
var fleetKinds = map[string]bool{"Cluster": true, "ClusterTaintPolicy": true}

// Admit returns why a policy, override or interpreter customization may
// not take effect, nil when it may. A folder rule binds what the files of
// its folder change, not only what they deploy: a namespaced policy must
// live in a namespace its folder may deploy to (Karmada applies it only to
// templates of its own namespace); a cluster-wide one (ClusterPropagation-
// Policy, ClusterOverridePolicy) reaches every namespace, so it may not
// live in a folder that restricts namespaces, and must be among the
// folder's cluster-scoped kinds when it lists some; an interpreter
// customization changes how every object of its kind is read, applied and
// judged healthy, so it may not live in a restricted folder at all, nor
// may a Cluster or ClusterTaintPolicy, which decide where every team's
// templates run. Files
// outside every folder rule are the platform team's and are only held to
// the policy's own namespace list.
func (p *Policy) Admit(d Declaration) *Refusal {
	if p == nil {
		return nil
	}
	gk := d.Kind + "." + d.Group
	what := workv1alpha1.ObjectKey{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}.Display()
	if d.Namespace != "" && len(p.Namespaces) > 0 && !matchAny(p.Namespaces, d.Namespace) {
		return &Refusal{Rule: "namespaces", Path: "metadata.namespace", Message: fmt.Sprintf(
			"%s is in namespace %q, which is not among the namespaces the restriction policy allows (%s)",
			what, d.Namespace, strings.Join(p.Namespaces, ", "))}
	}
	f := p.folder(d.Source)
	if f == nil {
		return nil
	}
	refuse := func(path, format string, args ...any) *Refusal {
		return &Refusal{Rule: "folders", Path: path, Message: fmt.Sprintf("%s in folder %s: ", what, f.Path) + fmt.Sprintf(format, args...)}
	}
	switch {
	case d.Kind == kindCustomization:
		return refuse("kind", "an interpreter customization changes how every %s of every team is applied and judged healthy; "+
			"only files outside the restricted folders may declare one", "object of its kind")
	case fleetKinds[d.Kind]:
		return refuse("kind", "it shapes where every team's templates run (a member's labels, taints or endpoint); "+
			"only files outside the restricted folders may declare one")
	case d.Namespace != "" && len(f.Namespaces) > 0 && !matchAny(f.Namespaces, d.Namespace):
		return refuse("metadata.namespace", "namespace %q is not among the namespaces the folder may deploy to (%s), "+
			"and a policy there would change that namespace's templates", d.Namespace, strings.Join(f.Namespaces, ", "))
	case d.Namespace == "" && len(f.Namespaces) > 0:
		return refuse("kind", "a cluster-wide policy reaches the templates of every namespace, and the folder may deploy only to %s; "+
			"use a namespaced %s in one of them", strings.Join(f.Namespaces, ", "), strings.TrimPrefix(d.Kind, "Cluster"))
	case d.Namespace == "" && len(f.ClusterScopedKinds) > 0 && !matchAny(f.ClusterScopedKinds, gk):
		return refuse("kind", "%s is not among the cluster-scoped kinds the folder may declare (%s)", gk, strings.Join(f.ClusterScopedKinds, ", "))
	}
	return nil
}

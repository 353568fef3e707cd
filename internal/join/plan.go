package join

import (
	"bytes"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Plan is what a join would write, computed without contacting anything:
// the member's objects (RBAC included) and, for a pull agent on a hub, the
// hub's. Reviewers read it before anyone runs the real join.
type Plan struct {
	// Member holds the member objects as a YAML stream.
	Member []byte
	// Hub holds the hub objects as a YAML stream; empty unless opts.Hub.
	Hub []byte
	// Manifests are what join prints, without the credentials a real join
	// mints (the push Secret, the agent's hub kubeconfig).
	Manifests Manifests
}

// DryRun plans the join of opts to the member cfg points at. cfg is only
// read (its server and CA go into the Cluster); nothing is contacted.
// Namespaces are listed as join would create them when missing: a real
// join leaves an existing one untouched.
func DryRun(cfg *rest.Config, opts Options) (*Plan, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ca, err := caBundle(cfg)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	var docs []any
	for _, ns := range append([]string{Namespace}, opts.Namespaces...) {
		docs = append(docs, corev1ac.Namespace(ns).WithLabels(joinLabels()))
	}
	docs = append(docs, corev1ac.ServiceAccount(ServiceAccount, Namespace).WithLabels(joinLabels()))
	d := desiredRBAC(opts)
	for _, o := range d.clusterRoles {
		docs = append(docs, o)
	}
	for _, o := range d.clusterRoleBindings {
		docs = append(docs, o)
	}
	for _, o := range d.roleBindings {
		docs = append(docs, o)
	}
	if p.Member, err = yamlStream(docs); err != nil {
		return nil, err
	}
	if opts.Hub {
		if p.Hub, err = hubPlan(opts.Name); err != nil {
			return nil, err
		}
	}
	res := &Result{APIEndpoint: cfg.Host, CABundle: ca, CheckNamespace: checkNamespace(opts)}
	if p.Manifests.Cluster, err = clusterManifest(opts, res); err != nil {
		return nil, err
	}
	if opts.Mode == ModePull {
		p.Manifests.Agent, err = agentManifest(opts)
	}
	return p, err
}

// hubPlan lists the hub objects JoinHub applies for cluster's agent.
func hubPlan(cluster string) ([]byte, error) {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return nil, err
	}
	return yamlStream([]any{corev1ac.Namespace(ns).WithLabels(joinLabels())}, hubObjects(ns)...)
}

// hubObjects are the ServiceAccount, Role and RoleBinding of an agent's
// identity on the hub, in its member's namespace ns.
func hubObjects(ns string) []any {
	l := joinLabels()
	return []any{
		corev1ac.ServiceAccount(HubAgent, ns).WithLabels(l),
		rbacv1ac.Role(HubAgent, ns).WithLabels(l).WithRules(hubRules()...),
		rbacv1ac.RoleBinding(HubAgent, ns).WithLabels(l).
			WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(HubAgent).WithNamespace(ns)).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("Role").WithName(HubAgent)),
	}
}

// yamlStream renders objects as one YAML stream.
func yamlStream(first []any, rest ...any) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range append(first, rest...) {
		out, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("failed to render the plan: %w", err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	return b.Bytes(), nil
}

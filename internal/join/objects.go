package join

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Names of the RBAC objects Join creates.
const (
	// ClusterRoleMember grants everything cluster-wide (no --namespaces).
	ClusterRoleMember = "propagit-member"
	// ClusterRoleNamespaced holds the namespaced rules, bound per namespace
	// by a RoleBinding named RoleBindingMember.
	ClusterRoleNamespaced = "propagit-member-namespaced"
	// ClusterRoleDiscovery lets a namespaced member read nodes and pods
	// (resource summary) and the discovery endpoints.
	ClusterRoleDiscovery = "propagit-member-discovery"
	// RoleBindingMember is the RoleBinding in each listed namespace.
	RoleBindingMember = "propagit-member"
	// ClusterRoleToken lets the ServiceAccount request tokens for itself
	// only, bound in Namespace by RoleBindingToken: the controller renews
	// the short-lived push token with it.
	ClusterRoleToken = "propagit-member-token"
	RoleBindingToken = "propagit-member-token"
	// ClusterRoleHubSecret lets a pull agent of the CR store write its
	// renewed hub token back into Secret HubSecretName, and no other
	// Secret, bound in Namespace by RoleBindingHubSecret.
	ClusterRoleHubSecret = "propagit-member-hub-secret"
	RoleBindingHubSecret = "propagit-member-hub-secret"
)

var applyOpts = metav1.ApplyOptions{FieldManager: FieldManager, Force: true}

func joinLabels() map[string]string {
	return map[string]string{workv1alpha1.LabelJoinedBy: LabelJoinedByValue}
}

// nonResourceRule is what health probes and discovery need.
func nonResourceRule() *rbacv1ac.PolicyRuleApplyConfiguration {
	return rbacv1ac.PolicyRule().WithVerbs("get").
		WithNonResourceURLs("/readyz", "/livez", "/healthz", "/version", "/api*", "/apis*")
}

// allRules are what server-side apply, prune and drift watches of any kind
// need: the object verbs on every resource. Never impersonate, never
// deletecollection. bind and escalate on roles, which let propagated Roles
// and bindings grant more than the ServiceAccount holds (cluster-admin
// included), only when grantBind is set: the restriction policy allows
// admin bindings. Without them the apiserver's escalation check lets a
// propagated Role grant only what the ServiceAccount itself may do.
func allRules(grantBind bool) []*rbacv1ac.PolicyRuleApplyConfiguration {
	rules := []*rbacv1ac.PolicyRuleApplyConfiguration{
		rbacv1ac.PolicyRule().WithAPIGroups("*").WithResources("*").
			WithVerbs("get", "list", "watch", "create", "update", "patch", "delete"),
	}
	if grantBind {
		rules = append(rules, rbacv1ac.PolicyRule().WithAPIGroups(rbacv1.GroupName).WithResources("roles", "clusterroles").
			WithVerbs("bind", "escalate"))
	}
	return rules
}

// tokenRule lets the ServiceAccount request a token for itself, and for no
// other account.
func tokenRule() *rbacv1ac.PolicyRuleApplyConfiguration {
	return rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("serviceaccounts/token").
		WithResourceNames(ServiceAccount).WithVerbs("create")
}

// hubSecretRule lets the agent read and rewrite the Secret holding its hub
// kubeconfig.
func hubSecretRule() *rbacv1ac.PolicyRuleApplyConfiguration {
	return rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("secrets").
		WithResourceNames(HubSecretName).WithVerbs("get", "update")
}

func subject() *rbacv1ac.SubjectApplyConfiguration {
	return rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(ServiceAccount).WithNamespace(Namespace)
}

func roleRef(name string) *rbacv1ac.RoleRefApplyConfiguration {
	return rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(name)
}

// desired lists the cluster-scoped RBAC objects of this join; ensure applies
// them and prune removes labelled ones not listed (a re-join that switched
// between cluster-wide and namespaced).
type desired struct {
	clusterRoles        []*rbacv1ac.ClusterRoleApplyConfiguration
	clusterRoleBindings []*rbacv1ac.ClusterRoleBindingApplyConfiguration
	roleBindings        []*rbacv1ac.RoleBindingApplyConfiguration
}

func desiredRBAC(opts Options) desired {
	l := joinLabels()
	token := desired{
		clusterRoles: []*rbacv1ac.ClusterRoleApplyConfiguration{rbacv1ac.ClusterRole(ClusterRoleToken).WithLabels(l).WithRules(tokenRule())},
		roleBindings: []*rbacv1ac.RoleBindingApplyConfiguration{rbacv1ac.RoleBinding(RoleBindingToken, Namespace).WithLabels(l).
			WithSubjects(subject()).WithRoleRef(roleRef(ClusterRoleToken))},
	}
	if opts.Mode == ModePull && opts.Hub {
		token.clusterRoles = append(token.clusterRoles, rbacv1ac.ClusterRole(ClusterRoleHubSecret).WithLabels(l).WithRules(hubSecretRule()))
		token.roleBindings = append(token.roleBindings, rbacv1ac.RoleBinding(RoleBindingHubSecret, Namespace).WithLabels(l).
			WithSubjects(subject()).WithRoleRef(roleRef(ClusterRoleHubSecret)))
	}
	if len(opts.Namespaces) == 0 {
		return desired{
			clusterRoles: append(token.clusterRoles,
				rbacv1ac.ClusterRole(ClusterRoleMember).WithLabels(l).WithRules(append(allRules(opts.GrantBind), nonResourceRule())...)),
			clusterRoleBindings: []*rbacv1ac.ClusterRoleBindingApplyConfiguration{
				rbacv1ac.ClusterRoleBinding(ClusterRoleMember).WithLabels(l).
					WithSubjects(subject()).WithRoleRef(roleRef(ClusterRoleMember)),
			},
			roleBindings: token.roleBindings,
		}
	}
	d := desired{
		roleBindings: token.roleBindings,
		clusterRoles: append(token.clusterRoles,
			rbacv1ac.ClusterRole(ClusterRoleNamespaced).WithLabels(l).WithRules(allRules(opts.GrantBind)...),
			rbacv1ac.ClusterRole(ClusterRoleDiscovery).WithLabels(l).WithRules(
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes", "pods").WithVerbs("get", "list", "watch"),
				nonResourceRule()),
		),
		clusterRoleBindings: []*rbacv1ac.ClusterRoleBindingApplyConfiguration{
			rbacv1ac.ClusterRoleBinding(ClusterRoleDiscovery).WithLabels(l).
				WithSubjects(subject()).WithRoleRef(roleRef(ClusterRoleDiscovery)),
		},
	}
	for _, ns := range opts.Namespaces {
		d.roleBindings = append(d.roleBindings, rbacv1ac.RoleBinding(RoleBindingMember, ns).WithLabels(l).
			WithSubjects(subject()).WithRoleRef(roleRef(ClusterRoleNamespaced)))
	}
	return d
}

// ensure creates the namespaces when missing, applies the ServiceAccount and
// the RBAC, then prunes labelled RBAC objects this join no longer wants.
func ensure(ctx context.Context, cs kubernetes.Interface, opts Options) error {
	for _, ns := range append([]string{Namespace}, opts.Namespaces...) {
		if err := ensureNamespace(ctx, cs, ns); err != nil {
			return err
		}
	}
	sa := corev1ac.ServiceAccount(ServiceAccount, Namespace).WithLabels(joinLabels())
	if _, err := cs.CoreV1().ServiceAccounts(Namespace).Apply(ctx, sa, applyOpts); err != nil {
		return fmt.Errorf("failed to apply ServiceAccount %s/%s: %w", Namespace, ServiceAccount, err)
	}
	d := desiredRBAC(opts)
	rbac := cs.RbacV1()
	for _, cr := range d.clusterRoles {
		if _, err := rbac.ClusterRoles().Apply(ctx, cr, applyOpts); err != nil {
			return fmt.Errorf("failed to apply ClusterRole %s: %w", *cr.Name, err)
		}
	}
	for _, crb := range d.clusterRoleBindings {
		if _, err := rbac.ClusterRoleBindings().Apply(ctx, crb, applyOpts); err != nil {
			return fmt.Errorf("failed to apply ClusterRoleBinding %s: %w", *crb.Name, err)
		}
	}
	for _, rb := range d.roleBindings {
		if _, err := rbac.RoleBindings(*rb.Namespace).Apply(ctx, rb, applyOpts); err != nil {
			return fmt.Errorf("failed to apply RoleBinding %s/%s: %w", *rb.Namespace, *rb.Name, err)
		}
	}
	return prune(ctx, cs, d)
}

// ensureNamespace creates ns, labelled, only when it does not exist; an
// existing namespace is left untouched so Unjoin never deletes it.
func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to read Namespace %s: %w", ns, err)
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: joinLabels()}}
	_, err = cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create Namespace %s: %w", ns, err)
	}
	return nil
}

// prune deletes labelled RBAC objects that are not in d.
func prune(ctx context.Context, cs kubernetes.Interface, d desired) error {
	keep := map[string]bool{}
	for _, o := range d.clusterRoles {
		keep["ClusterRole/"+*o.Name] = true
	}
	for _, o := range d.clusterRoleBindings {
		keep["ClusterRoleBinding/"+*o.Name] = true
	}
	for _, o := range d.roleBindings {
		keep["RoleBinding/"+*o.Namespace+"/"+*o.Name] = true
	}
	objs, err := listJoined(ctx, cs)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.kind == kindNamespace || o.kind == kindServiceAccount || o.kind == kindRole || o.hubIdentity() || keep[o.String()] {
			continue
		}
		if err := o.delete(ctx, cs); err != nil {
			return err
		}
	}
	return nil
}

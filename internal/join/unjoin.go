package join

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

const (
	kindNamespace          = "Namespace"
	kindServiceAccount     = "ServiceAccount"
	kindClusterRole        = "ClusterRole"
	kindClusterRoleBinding = "ClusterRoleBinding"
	kindRoleBinding        = "RoleBinding"
	kindRole               = "Role"
)

// joined is one labelled object in the member.
type joined struct {
	kind, namespace, name string
}

// String returns Kind/namespace/name or Kind/name.
func (o joined) String() string {
	if o.namespace == "" {
		return o.kind + "/" + o.name
	}
	return o.kind + "/" + o.namespace + "/" + o.name
}

func (o joined) delete(ctx context.Context, cs kubernetes.Interface) error {
	var err error
	opts := metav1.DeleteOptions{}
	switch o.kind {
	case kindNamespace:
		err = cs.CoreV1().Namespaces().Delete(ctx, o.name, opts)
	case kindServiceAccount:
		err = cs.CoreV1().ServiceAccounts(o.namespace).Delete(ctx, o.name, opts)
	case kindClusterRole:
		err = cs.RbacV1().ClusterRoles().Delete(ctx, o.name, opts)
	case kindClusterRoleBinding:
		err = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.name, opts)
	case kindRoleBinding:
		err = cs.RbacV1().RoleBindings(o.namespace).Delete(ctx, o.name, opts)
	case kindRole:
		err = cs.RbacV1().Roles(o.namespace).Delete(ctx, o.name, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to delete %s: %w", o, err)
	}
	return nil
}

// listJoined lists every object carrying the join label, namespaces last.
func listJoined(ctx context.Context, cs kubernetes.Interface) ([]joined, error) {
	lo := metav1.ListOptions{LabelSelector: workv1alpha1.LabelJoinedBy + "=" + LabelJoinedByValue}
	var out []joined
	rbs, err := cs.RbacV1().RoleBindings("").List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list RoleBindings: %w", err)
	}
	for _, o := range rbs.Items {
		out = append(out, joined{kindRoleBinding, o.Namespace, o.Name})
	}
	roles, err := cs.RbacV1().Roles("").List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list Roles: %w", err)
	}
	for _, o := range roles.Items {
		out = append(out, joined{kindRole, o.Namespace, o.Name})
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list ClusterRoleBindings: %w", err)
	}
	for _, o := range crbs.Items {
		out = append(out, joined{kindClusterRoleBinding, "", o.Name})
	}
	crs, err := cs.RbacV1().ClusterRoles().List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list ClusterRoles: %w", err)
	}
	for _, o := range crs.Items {
		out = append(out, joined{kindClusterRole, "", o.Name})
	}
	sas, err := cs.CoreV1().ServiceAccounts("").List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list ServiceAccounts: %w", err)
	}
	for _, o := range sas.Items {
		out = append(out, joined{kindServiceAccount, o.Namespace, o.Name})
	}
	nss, err := cs.CoreV1().Namespaces().List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("failed to list Namespaces: %w", err)
	}
	for _, o := range nss.Items {
		out = append(out, joined{kindNamespace, "", o.Name})
	}
	return out, nil
}

// UnjoinResult lists what Unjoin deleted and what it kept.
type UnjoinResult struct {
	// Deleted holds Kind/namespace/name of each deleted object (of each it
	// would delete, for a plan).
	Deleted []string
	// Kept holds labelled namespaces left in place because they still hold
	// objects Join did not create, with the first such object.
	Kept []string
}

// Unjoin deletes the objects labelled propagit.io/joined-by=join in the
// member reached by cfg, and nothing else. A labelled namespace is deleted
// only when no other object remains in it, because deleting a namespace
// deletes its content. Unjoin is idempotent.
func Unjoin(ctx context.Context, cfg *rest.Config) (*UnjoinResult, error) {
	return unjoin(ctx, cfg, false, memberObject)
}

// PlanUnjoin is Unjoin without deleting: it reads the member and returns
// what Unjoin would delete and keep.
func PlanUnjoin(ctx context.Context, cfg *rest.Config) (*UnjoinResult, error) {
	return unjoin(ctx, cfg, true, memberObject)
}

func memberObject(o joined) bool { return !o.hubIdentity() }

// hubIdentity reports whether o is part of a pull agent's identity JoinHub
// made, which only UnjoinHub removes: a cluster may be hub and member.
func (o joined) hubIdentity() bool {
	if o.kind == kindNamespace {
		return strings.HasPrefix(o.name, workv1alpha1.MemberNamespacePrefix)
	}
	return strings.HasPrefix(o.namespace, workv1alpha1.MemberNamespacePrefix) && o.name == HubAgent
}

// UnjoinHub deletes, on the hub cfg reaches, the identity JoinHub made for
// cluster's pull agent: the labelled ServiceAccount, Role and RoleBinding
// in the member's hub namespace, which revokes the agent's hub token.
// Nothing of another member is touched. The namespace goes too when it
// holds nothing else; while it holds the member's Work it is kept (the
// controller deletes the Work once the Cluster leaves Git).
func UnjoinHub(ctx context.Context, cfg *rest.Config, cluster string) (*UnjoinResult, error) {
	return unjoinHub(ctx, cfg, cluster, false)
}

// PlanUnjoinHub is UnjoinHub without deleting.
func PlanUnjoinHub(ctx context.Context, cfg *rest.Config, cluster string) (*UnjoinResult, error) {
	return unjoinHub(ctx, cfg, cluster, true)
}

func unjoinHub(ctx context.Context, cfg *rest.Config, cluster string, dryRun bool) (*UnjoinResult, error) {
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return nil, err
	}
	return unjoin(ctx, cfg, dryRun, func(o joined) bool {
		return o.namespace == ns || (o.kind == kindNamespace && o.name == ns)
	})
}

// unjoin deletes the labelled objects keep selects; with dryRun it only
// reports what it would delete and keep.
func unjoin(ctx context.Context, cfg *rest.Config, dryRun bool, keep func(joined) bool) (*UnjoinResult, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the client: %w", err)
	}
	all, err := listJoined(ctx, cs)
	if err != nil {
		return nil, err
	}
	var objs []joined
	for _, o := range all {
		if keep(o) {
			objs = append(objs, o)
		}
	}
	res := &UnjoinResult{}
	for _, o := range objs {
		if o.kind == kindNamespace {
			other, err := foreignObject(ctx, cfg, o.name)
			if err != nil {
				return nil, err
			}
			if other != "" {
				res.Kept = append(res.Kept, o.String()+" (holds "+other+")")
				continue
			}
		}
		if dryRun {
			res.Deleted = append(res.Deleted, o.String())
			continue
		}
		if err := o.delete(ctx, cs); err != nil {
			return nil, err
		}
		res.Deleted = append(res.Deleted, o.String())
	}
	return res, nil
}

// foreignObject returns the first object in ns that Join did not create and
// that the apiserver did not create on its own, or "" when there is none.
// It lists every namespaced kind the member serves.
func foreignObject(ctx context.Context, cfg *rest.Config, ns string) (string, error) {
	// Listing every kind meets deprecated ones (v1 Endpoints); their
	// warnings say nothing to someone unjoining.
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("failed to build the discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("failed to build the dynamic client: %w", err)
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return "", fmt.Errorf("failed to discover the member's resources: %w", err)
	}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			if !hasVerb(r.Verbs, "list") || r.Kind == "Event" || strings.Contains(r.Name, "/") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return "", fmt.Errorf("failed to list %s in namespace %s: %w", r.Name, ns, err)
			}
			for _, it := range items.Items {
				if it.GetLabels()[workv1alpha1.LabelJoinedBy] == LabelJoinedByValue || builtIn(r.Kind, it.GetName()) {
					continue
				}
				return r.Kind + "/" + it.GetName(), nil
			}
		}
	}
	return "", nil
}

// builtIn reports objects Kubernetes creates in every namespace.
func builtIn(kind, name string) bool {
	return (kind == "ServiceAccount" && name == "default") || (kind == "ConfigMap" && name == "kube-root-ca.crt")
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

package join

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// HubAgent names the ServiceAccount, Role and RoleBinding a pull agent
// uses on the hub, in its member's namespace.
const HubAgent = "propagit-agent"

// HubIdentity is what JoinHub made on the hub for one pull agent.
type HubIdentity struct {
	// Namespace is the member's namespace on the hub: its Work lives there.
	Namespace string
	// Kubeconfig reaches the hub as the agent's ServiceAccount.
	Kubeconfig []byte
	// TokenExpiry is when the kubeconfig's token expires.
	TokenExpiry time.Time
}

// hubRules are all a pull agent does on the hub (CR store): read its Work,
// write its status, which also carries its heartbeat, and renew its own
// token (no other account's). The namespace holds only that member's Work,
// so the Role reaches nothing of another member.
func hubRules() []*rbacv1ac.PolicyRuleApplyConfiguration {
	return []*rbacv1ac.PolicyRuleApplyConfiguration{
		rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("serviceaccounts/token").
			WithResourceNames(HubAgent).WithVerbs("create"),
		rbacv1ac.PolicyRule().WithAPIGroups(workv1alpha1.GroupVersion.Group).WithResources("works").
			WithVerbs("get", "list", "watch"),
		rbacv1ac.PolicyRule().WithAPIGroups(workv1alpha1.GroupVersion.Group).WithResources("works/status").
			WithVerbs("get", "update", "patch"),
	}
}

// JoinHub creates, on the hub reached by hubCfg, the identity of opts.Name's
// pull agent for the CR store: the member's namespace
// (workv1alpha1.MemberNamespace) when missing, ServiceAccount, Role and
// RoleBinding HubAgent there, and returns a kubeconfig holding a token of
// that ServiceAccount (opts.HubTokenExpiration; the agent renews it after
// two thirds of its life, see agent.HubToken; it reaches that one
// namespace's Work only). Running it again changes nothing but mints a
// fresh token.
func JoinHub(ctx context.Context, hubCfg *rest.Config, opts Options) (*HubIdentity, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ns, err := workv1alpha1.MemberNamespace(opts.Name)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the hub client: %w", err)
	}
	if err := ensureNamespace(ctx, cs, ns); err != nil {
		return nil, err
	}
	if err := applyHubRBAC(ctx, cs, ns); err != nil {
		return nil, err
	}
	tr := &authenticationv1.TokenRequest{}
	if secs := int64(opts.HubTokenExpiration / time.Second); secs > 0 {
		tr.Spec.ExpirationSeconds = &secs
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, HubAgent, tr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to create a token for ServiceAccount %s/%s on the hub: %w", ns, HubAgent, err)
	}
	ca, err := caBundle(hubCfg)
	if err != nil {
		return nil, err
	}
	kc, err := hubKubeconfig(hubCfg.Host, ca, ns, tok.Status.Token)
	if err != nil {
		return nil, err
	}
	return &HubIdentity{Namespace: ns, Kubeconfig: kc, TokenExpiry: tok.Status.ExpirationTimestamp.Time}, nil
}

func applyHubRBAC(ctx context.Context, cs kubernetes.Interface, ns string) error {
	objs := hubObjects(ns)
	sa := objs[0].(*corev1ac.ServiceAccountApplyConfiguration)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Apply(ctx, sa, applyOpts); err != nil {
		return fmt.Errorf("failed to apply ServiceAccount %s/%s on the hub: %w", ns, HubAgent, err)
	}
	role := objs[1].(*rbacv1ac.RoleApplyConfiguration)
	if _, err := cs.RbacV1().Roles(ns).Apply(ctx, role, applyOpts); err != nil {
		return fmt.Errorf("failed to apply Role %s/%s on the hub: %w", ns, HubAgent, err)
	}
	rb := objs[2].(*rbacv1ac.RoleBindingApplyConfiguration)
	if _, err := cs.RbacV1().RoleBindings(ns).Apply(ctx, rb, applyOpts); err != nil {
		return fmt.Errorf("failed to apply RoleBinding %s/%s on the hub: %w", ns, HubAgent, err)
	}
	return nil
}

// hubKubeconfig is a kubeconfig for server holding token, whose default
// namespace is the agent's.
func hubKubeconfig(server string, ca []byte, ns, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[HubAgent] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: HubAgent, Namespace: ns}
	cfg.CurrentContext = "hub"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write the hub kubeconfig: %w", err)
	}
	return b, nil
}

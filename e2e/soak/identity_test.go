package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/propagit/propagit/internal/testenv"
)

// identityNamespace holds the ServiceAccounts the propagit processes
// authenticate as on each member.
const identityNamespace = "soak-identities"

// saUser is the name the apiserver (and so its audit log) gives to the
// ServiceAccount name: "system:serviceaccount:<ns>:<name>".
func saUser(name string) string {
	return "system:serviceaccount:" + identityNamespace + ":" + name
}

// writeIdentityKubeconfig gives name its own identity on m: a
// ServiceAccount bound to cluster-admin and a token for it lasting ttl,
// written as a kubeconfig at path. propagit sets one user agent for every
// process, so the audit log tells replicas apart by this identity alone.
func writeIdentityKubeconfig(ctx context.Context, m *testenv.Member, name, path string, ttl time.Duration) error {
	c := m.Client()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !isAlreadyExists(err) {
		return fmt.Errorf("%s: failed to create namespace %s: %w", m.Name, identityNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: identityNamespace}}
	if _, err := c.CoreV1().ServiceAccounts(identityNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: failed to create ServiceAccount %s: %w", m.Name, name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "soak-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: identityNamespace}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: failed to bind %s: %w", m.Name, name, err)
	}
	secs := int64(ttl / time.Second)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}
	tok, err := c.CoreV1().ServiceAccounts(identityNamespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("%s: failed to get a token for %s: %w", m.Name, name, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[m.Name] = &clientcmdapi.Cluster{Server: m.Config.Host, CertificateAuthorityData: m.Config.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts[m.Name] = &clientcmdapi.Context{Cluster: m.Name, AuthInfo: name}
	kc.CurrentContext = m.Name
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}

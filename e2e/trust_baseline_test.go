package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/restrict"
	"github.com/propagit/propagit/internal/testenv"
)

// memberRoleBindingYAML binds join's member ClusterRole to user.
func memberRoleBindingYAML(name, user string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %s
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %s
`, name, join.ClusterRoleMember, user)
}

// TestTrustBaselineRefusesEscalation is finding 4 of issue #25 on a real
// member joined by `propagit join`, with the controller applying as join's
// ServiceAccount: a commit binds propagit's own member ClusterRole to the
// user mallory. The apiserver allows that binding (the ServiceAccount holds
// every permission of the role), and the role mints tokens for any
// ServiceAccount, so mallory would become cluster-admin through a
// ServiceAccount of kube-system. The default restriction policy refuses
// the binding: a render error naming admin-bindings at roleRef.name, no
// binding on the member, and mallory cannot mint the token.
func TestTrustBaselineRefusesEscalation(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 1})
	m1 := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	admin := m1.Client()
	ns := randomNamespace("baseline")
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	powerful := powerfulServiceAccount(ctx, t, admin, ns)

	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.Write(fleetDir+"/clusters/"+m1.Name+".yaml", clusterYAML(m1.Name))
	co.Write(fleetDir+"/app/policy.yaml", configMapsPolicyYAML(ns, m1.Name))
	co.Write(fleetDir+"/app/cm.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	rev1 := co.CommitPush("an application")
	s := newSetup(t, remote, m1)
	s.KubeconfigDir = joinedKubeconfigDir(ctx, t, m1)
	ctrl := startController(t, s)
	reader.waitApplied(rev1, m1.Name)

	name := randomNamespace("mallory")
	co.Write(fleetDir+"/rbac/binding.yaml", memberRoleBindingYAML(name, "mallory"))
	co.Write(fleetDir+"/rbac/policy.yaml", bindingPolicyYAML(name, m1.Name))
	rev2 := co.CommitPush("mallory helps with the rollout")
	ctrl.waitRevision(rev2)
	eventually(t, converge, func() (bool, string) {
		if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Fatalf("the escalation landed: ClusterRoleBinding %s grants %s to mallory; %s", name, join.ClusterRoleMember,
				malloryMints(ctx, t, m1, powerful))
		}
		for _, e := range reader.report(t).RenderErrors {
			if strings.Contains(e.Error, restrict.DenyAdminBindings) && strings.Contains(e.Error, "roleRef.name") {
				return true, ""
			}
		}
		return false, "no refusal naming " + restrict.DenyAdminBindings + " at roleRef.name in status"
	})
	ctrl.waitPasses(2)
	if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ClusterRoleBinding %s after the refusal: %v, want NotFound", name, err)
	}
	if msg := malloryMints(ctx, t, m1, powerful); !strings.HasPrefix(msg, "forbidden") {
		t.Fatalf("mallory after the refusal: %s", msg)
	}
}

// powerfulServiceAccount creates a ServiceAccount bound to cluster-admin,
// as controllers and CI accounts are in many clusters, and returns it.
func powerfulServiceAccount(ctx context.Context, t *testing.T, admin kubernetes.Interface, ns string) *corev1.ServiceAccount {
	t.Helper()
	sa, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-ops"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return sa
}

// malloryMints tries, as mallory, to mint a token for sa and to use it for
// everything; it says what happened ("forbidden: …" when refused).
func malloryMints(ctx context.Context, t *testing.T, m *testenv.Member, sa *corev1.ServiceAccount) string {
	t.Helper()
	cfg := rest.CopyConfig(m.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "mallory"}
	mallory, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mallory.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if apierrors.IsForbidden(err) {
		return "forbidden: " + err.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	asSA := rest.AnonymousClientConfig(m.Config)
	asSA.BearerToken = tok.Status.Token
	cs, err := kubernetes.NewForConfig(asSA)
	if err != nil {
		t.Fatal(err)
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}}}
	got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("mallory minted a token for %s/%s, with which every verb on every resource is allowed: %v",
		sa.Namespace, sa.Name, got.Status.Allowed)
}

// joinedKubeconfigDir joins m as `propagit join --mode push` does and
// returns a --kubeconfig-dir whose credential is join's token, so that the
// apiserver judges what the controller applies as it would in production.
func joinedKubeconfigDir(ctx context.Context, t *testing.T, m *testenv.Member) string {
	t.Helper()
	opts := join.DefaultOptions()
	opts.Name, opts.Mode, opts.CheckTimeout = m.Name, join.ModePush, 15*time.Second
	res, err := join.Join(ctx, m.Config, opts)
	if err != nil {
		t.Fatalf("join %s: %v", m.Name, err)
	}
	kc, err := clientcmd.LoadFromFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kc.AuthInfos = map[string]*clientcmdapi.AuthInfo{"propagit": {Token: res.Token}}
	for _, c := range kc.Contexts {
		c.AuthInfo = "propagit"
	}
	dir := t.TempDir()
	if err := clientcmd.WriteToFile(*kc, filepath.Join(dir, m.Name+".kubeconfig")); err != nil {
		t.Fatal(err)
	}
	return dir
}

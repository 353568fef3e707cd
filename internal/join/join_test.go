package join

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/propagit/propagit/internal/testenv"
)

// TestJoinLifecycle runs join (push, twice), a namespaced re-join, and unjoin
// against one real member, in order.
func TestJoinLifecycle(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	admin := m.Client()
	opts := DefaultOptions()
	opts.Name, opts.Mode, opts.CheckTimeout = "member-a", ModePush, 15*time.Second

	t.Run("push: token can dry-run a Deployment and list nodes", func(t *testing.T) {
		res, err := Join(ctx, cfg, opts)
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
		if res.Token == "" || len(res.CABundle) == 0 {
			t.Fatalf("want a token and a CA bundle, got token %d bytes, CA %d bytes", len(res.Token), len(res.CABundle))
		}
		tc := kubernetes.NewForConfigOrDie(tokenConfig(res))
		if err := dryRunDeployment(ctx, tc, "default"); err != nil {
			t.Fatalf("token client cannot create a Deployment: %v", err)
		}
		if _, err := tc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("token client cannot list nodes: %v", err)
		}
		// It can propagate RBAC (bind) but never act as someone else.
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "check", Namespace: "default"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "someone"}}}
		if _, err := tc.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("token client cannot propagate a RoleBinding: %v", err)
		}
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users"}}}
		got, err := tc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed {
			t.Fatal("the joined ServiceAccount may impersonate users")
		}
	})

	t.Run("push: join twice changes nothing", func(t *testing.T) {
		before := resourceVersions(ctx, t, admin)
		if _, err := Join(ctx, cfg, opts); err != nil {
			t.Fatalf("second Join: %v", err)
		}
		after := resourceVersions(ctx, t, admin)
		if strings.Join(before, ",") != strings.Join(after, ",") {
			t.Fatalf("second join changed objects:\nbefore %v\nafter  %v", before, after)
		}
	})

	t.Run("namespaces: allowed in team-a, forbidden in default", func(t *testing.T) {
		nsOpts := opts
		nsOpts.Mode, nsOpts.Namespaces = ModePull, []string{"team-a"}
		if _, err := Join(ctx, cfg, nsOpts); err != nil {
			t.Fatalf("Join --namespaces team-a: %v", err)
		}
		sa := kubernetes.NewForConfigOrDie(impersonated(cfg))
		if err := dryRunDeployment(ctx, sa, "team-a"); err != nil {
			t.Fatalf("SA cannot create in team-a: %v", err)
		}
		if err := dryRunDeployment(ctx, sa, "default"); !apierrors.IsForbidden(err) {
			t.Fatalf("SA create in default: want Forbidden, got %v", err)
		}
		if _, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("SA cannot list nodes: %v", err)
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, ClusterRoleMember, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("cluster-wide binding left after namespaced re-join: %v", err)
		}
	})

	t.Run("unjoin removes labelled objects only, twice", func(t *testing.T) {
		other := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: Namespace}}
		if _, err := admin.CoreV1().ServiceAccounts(Namespace).Create(ctx, other, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if _, err := Unjoin(ctx, cfg); err != nil {
				t.Fatalf("Unjoin #%d: %v", i+1, err)
			}
		}
		left, err := listJoined(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range left {
			if o.kind == kindNamespace && o.name == Namespace {
				continue // kept: it still holds the unrelated ServiceAccount
			}
			if o.kind == kindNamespace && isTerminating(ctx, admin, o.name) {
				continue // no namespace controller in testenv finishes deletion
			}
			t.Errorf("left after unjoin: %s", o)
		}
		if _, err := admin.CoreV1().ServiceAccounts(Namespace).Get(ctx, "unrelated", metav1.GetOptions{}); err != nil {
			t.Fatalf("unrelated ServiceAccount: %v", err)
		}
	})
}

func dryRunDeployment(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, checkDeployment(ns), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

func isTerminating(ctx context.Context, cs kubernetes.Interface, ns string) bool {
	n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	return err == nil && n.DeletionTimestamp != nil
}

// resourceVersions lists kind/name@resourceVersion of every joined object.
func resourceVersions(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	objs, err := listJoined(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		var rv string
		switch o.kind {
		case kindServiceAccount:
			sa, err := cs.CoreV1().ServiceAccounts(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = sa.ResourceVersion
		case kindClusterRole:
			cr, err := cs.RbacV1().ClusterRoles().Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = cr.ResourceVersion
		case kindClusterRoleBinding:
			crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = crb.ResourceVersion
		}
		out = append(out, o.String()+"@"+rv)
	}
	return out
}

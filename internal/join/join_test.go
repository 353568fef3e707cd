package join

import (
	"context"
	"slices"
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

	"github.com/propagit/propagit/internal/restrict"
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
		// Under the default restriction policy it cannot grant more than it
		// holds (no bind or escalate): a binding to cluster-admin, which
		// holds impersonate and deletecollection, is refused. (admin is
		// empty here: no controller-manager aggregates it.)
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "check", Namespace: "default"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "someone"}}}
		if _, err := tc.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
			t.Fatalf("a binding to cluster-admin without bind/escalate: want Forbidden, got %v", err)
		}
		// It may request a token for itself: the controller renews with it.
		if !canCreateToken(ctx, t, tc, Namespace, ServiceAccount) {
			t.Error("the joined ServiceAccount cannot renew its own token")
		}
	})

	t.Run("push: a restriction policy that allows admin bindings grants bind", func(t *testing.T) {
		bindOpts := opts
		if err := bindOpts.WithRestrictions(&restrict.Policy{Allow: []string{restrict.DenyAdminBindings}}); err != nil {
			t.Fatal(err)
		}
		res, err := Join(ctx, cfg, bindOpts)
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
		tc := kubernetes.NewForConfigOrDie(tokenConfig(res))
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "check", Namespace: "default"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "someone"}}}
		if _, err := tc.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("token client cannot propagate a RoleBinding although the policy allows it: %v", err)
		}
		if _, err := Join(ctx, cfg, opts); err != nil { // back to the default for the next steps
			t.Fatal(err)
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
		// Limited to its namespaces it mints tokens for itself, and for no
		// account elsewhere (RBAC's "*" covers serviceaccounts/token: a
		// cluster-wide join can, which is why it equals cluster-admin).
		if !canCreateToken(ctx, t, sa, Namespace, ServiceAccount) {
			t.Error("a namespaced member cannot renew its own token")
		}
		if canCreateToken(ctx, t, sa, "kube-system", "default") {
			t.Error("a namespaced member can mint tokens for kube-system")
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
		before, err := listJoined(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := PlanUnjoin(ctx, cfg)
		if err != nil {
			t.Fatalf("PlanUnjoin: %v", err)
		}
		if after, err := listJoined(ctx, admin); err != nil || len(after) != len(before) {
			t.Fatalf("the plan deleted something: %d labelled objects before, %d after (%v)", len(before), len(after), err)
		}
		var deleted []string
		for i := 0; i < 2; i++ {
			res, err := Unjoin(ctx, cfg)
			if err != nil {
				t.Fatalf("Unjoin #%d: %v", i+1, err)
			}
			if i == 0 {
				deleted = res.Deleted
			}
		}
		if !slices.Equal(plan.Deleted, deleted) || len(plan.Kept) != 1 {
			t.Errorf("the plan said delete %v and keep %v; Unjoin deleted %v", plan.Deleted, plan.Kept, deleted)
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

// canCreateToken asks the apiserver whether cs may request a token for
// ServiceAccount ns/name.
func canCreateToken(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) bool {
	t.Helper()
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "serviceaccounts",
			Subresource: "token", Name: name}}}
	got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status.Allowed
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

// TestWithRestrictions pins what a restriction policy narrows join to.
func TestWithRestrictions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		given   []string
		policy  *restrict.Policy
		wantNS  []string
		bind    bool
		wantErr string
	}{
		{name: "default policy: no bind", policy: nil},
		{name: "admin bindings allowed", policy: &restrict.Policy{Allow: []string{restrict.DenyAdminBindings}}, bind: true},
		{name: "escalating roles allowed", policy: &restrict.Policy{Allow: []string{restrict.DenyRBACEscalation}}, bind: true},
		{name: "other denials lifted: no bind", policy: &restrict.Policy{Allow: []string{restrict.DenyAdoption, restrict.DenyAPIExtensions}}},
		{name: "policy namespaces become the member's", policy: &restrict.Policy{Namespaces: []string{"shop", "shop-data"}}, wantNS: []string{"shop", "shop-data"}},
		{name: "--namespaces win", given: []string{"a"}, policy: &restrict.Policy{Namespaces: []string{"shop"}}, wantNS: []string{"a"}},
		{name: "patterns cannot be granted", policy: &restrict.Policy{Namespaces: []string{"team-*"}}, wantErr: "by pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Namespaces = tc.given
			err := o.WithRestrictions(tc.policy)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(o.Namespaces, ",") != strings.Join(tc.wantNS, ",") || o.GrantBind != tc.bind {
				t.Errorf("namespaces %v bind %v, want %v %v", o.Namespaces, o.GrantBind, tc.wantNS, tc.bind)
			}
		})
	}
}

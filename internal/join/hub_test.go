package join

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestJoinHubGrantsOwnWorkOnly: the hub identity of a pull agent may read
// its Work and write its status in its own namespace, and nothing else;
// joining again keeps the objects and mints a fresh token.
func TestJoinHubGrantsOwnWorkOnly(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	hub := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := DefaultOptions()
	opts.Name, opts.Mode, opts.TokenExpiration = "edge-1", ModePull, time.Hour
	first, err := JoinHub(ctx, hub.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	id, err := JoinHub(ctx, hub.Config, opts)
	if err != nil {
		t.Fatalf("second join: %v", err)
	}
	if id.Namespace != "propagit-member-edge-1" || string(id.Kubeconfig) == string(first.Kubeconfig) {
		t.Errorf("second join: namespace %s, fresh token %v", id.Namespace, string(id.Kubeconfig) != string(first.Kubeconfig))
	}
	ns, err := hub.Client().CoreV1().Namespaces().Get(ctx, id.Namespace, metav1.GetOptions{})
	if err != nil || ns.Labels[workv1alpha1.LabelJoinedBy] != LabelJoinedByValue {
		t.Errorf("namespace %s: labels %v, %v", id.Namespace, ns.Labels, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(id.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	agent := kubernetes.NewForConfigOrDie(cfg)
	for _, c := range []struct {
		verb, resource, sub, ns string
		allowed                 bool
	}{
		{"get", "works", "", id.Namespace, true},
		{"watch", "works", "", id.Namespace, true},
		{"update", "works", "status", id.Namespace, true},
		{"create", "works", "", id.Namespace, false},
		{"update", "works", "", id.Namespace, false},
		{"delete", "works", "", id.Namespace, false},
		{"get", "works", "", "propagit-member-edge-2", false},
		{"update", "works", "status", "propagit-member-edge-2", false},
		{"list", "works", "", "", false},
		{"get", "secrets", "", id.Namespace, false},
	} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.verb, Group: workv1alpha1.GroupVersion.Group,
				Resource: c.resource, Subresource: c.sub, Namespace: c.ns}}}
		if c.resource == "secrets" {
			review.Spec.ResourceAttributes.Group = ""
		}
		got, err := agent.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != c.allowed {
			t.Errorf("%s %s/%s in %q: allowed = %v, want %v", c.verb, c.resource, c.sub, c.ns, got.Status.Allowed, c.allowed)
		}
	}
	// Its token renews itself, and mints nothing for another account.
	for name, allowed := range map[string]bool{HubAgent: true, "default": false, "propagit-controller": false} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Resource: "serviceaccounts",
				Subresource: "token", Name: name, Namespace: id.Namespace}}}
		got, err := agent.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != allowed {
			t.Errorf("create a token for ServiceAccount %s/%s: allowed = %v, want %v", id.Namespace, name, got.Status.Allowed, allowed)
		}
	}
	if _, err := JoinHub(ctx, hub.Config, Options{Name: "a-name-far-too-long-for-a-member-namespace-on-a-hub", Mode: ModePull}); err == nil {
		t.Error("JoinHub accepted a name whose namespace is not a DNS label")
	}
}

// TestUnjoinHubRevokesOneAgent: UnjoinHub removes one pull agent's hub
// identity, so its token stops working, and nothing of another agent; the
// member's own unjoin, on a cluster that is also the hub, leaves every hub
// identity alone; a hub namespace still holding other objects is kept.
func TestUnjoinHubRevokesOneAgent(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	hub := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids := map[string]*HubIdentity{}
	for _, name := range []string{"edge-1", "edge-2"} {
		opts := DefaultOptions()
		opts.Name, opts.Mode, opts.Hub, opts.CheckTimeout = name, ModePull, true, 15*time.Second
		id, err := JoinHub(ctx, hub.Config, opts)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
		if _, err := Join(ctx, hub.Config, opts); err != nil {
			t.Fatal(err)
		}
	}
	cs := hub.Client()
	// edge-2's namespace holds something else: it must stay.
	if _, err := cs.CoreV1().ConfigMaps(ids["edge-2"].Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	authenticates := func(name string) bool {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(ids[name].Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil
	}
	if _, err := Unjoin(ctx, hub.Config); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"edge-1", "edge-2"} {
		if !authenticates(name) {
			t.Errorf("the member's unjoin revoked %s's hub identity", name)
		}
	}
	res, err := UnjoinHub(ctx, hub.Config, "edge-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"RoleBinding/propagit-member-edge-1/propagit-agent", "Role/propagit-member-edge-1/propagit-agent",
		"ServiceAccount/propagit-member-edge-1/propagit-agent", "Namespace/propagit-member-edge-1"}
	if diff := cmp.Diff(want, res.Deleted); diff != "" {
		t.Errorf("UnjoinHub(edge-1) deleted (-want +got):\n%s", diff)
	}
	// The authenticator reads ServiceAccounts through a cache.
	e2etest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		return !authenticates("edge-1"), "edge-1's hub token still authenticates after UnjoinHub"
	})
	if !authenticates("edge-2") {
		t.Error("UnjoinHub(edge-1) revoked edge-2")
	}
	res, err = UnjoinHub(ctx, hub.Config, "edge-2")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 1 || !strings.Contains(res.Kept[0], "ConfigMap/kept") {
		t.Errorf("UnjoinHub(edge-2) kept %v, want its namespace (holds ConfigMap/kept)", res.Kept)
	}
	if _, err := UnjoinHub(ctx, hub.Config, "../edge-3"); err == nil {
		t.Error("UnjoinHub accepted a name that is not a DNS label")
	}
}

package join

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

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
	if _, err := JoinHub(ctx, hub.Config, Options{Name: "a-name-far-too-long-for-a-member-namespace-on-a-hub", Mode: ModePull}); err == nil {
		t.Error("JoinHub accepted a name whose namespace is not a DNS label")
	}
}

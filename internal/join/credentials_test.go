package join

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
)

// TestRenderBoundCredential: the Secret and Cluster join writes are accepted
// as they are by the controller's bound-credential lookup, and the Secret
// is bound to the member by its label.
func TestRenderBoundCredential(t *testing.T) {
	res := &Result{APIEndpoint: "https://10.0.0.1:6443", CABundle: []byte("CA"), Token: "tok"}
	m, err := Render(Options{Name: "edge", Mode: ModePush}, res)
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := yaml.Unmarshal(m.Secret, &s); err != nil {
		t.Fatal(err)
	}
	var c clusterv1alpha1.Cluster
	if err := yaml.Unmarshal(m.Cluster, &c); err != nil {
		t.Fatal(err)
	}
	if s.Namespace != CredentialsNamespace || s.Labels[workv1alpha1.LabelCredentialsFor] != "edge" {
		t.Fatalf("Secret %s/%s labels %v: want namespace %s and %s=edge", s.Namespace, s.Name, s.Labels,
			CredentialsNamespace, workv1alpha1.LabelCredentialsFor)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	creds := &cluster.Credentials{Hub: fake.NewClientBuilder().WithScheme(scheme).WithObjects(&s).Build()}
	cfg, err := creds.Config(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != res.APIEndpoint || cfg.BearerToken != res.Token || string(cfg.CAData) != "CA" || cfg.Insecure {
		t.Errorf("got host %s, token ok %v, CA %q, insecure %v", cfg.Host, cfg.BearerToken == res.Token, cfg.CAData, cfg.Insecure)
	}
}

package e2e

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
)

// workCRD is the Work CRD as deployed.
const workCRD = "../deploy/crds/propagit.io_works.yaml"

// startHub makes m a hub: it installs the Work CRD from deploy/, waits
// until it is served, and returns a client that knows Works, Secrets and
// Namespaces.
func startHub(t *testing.T, m *testenv.Member) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, corev1.AddToScheme, workv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	e2etest.InstallCRD(t, m, workCRD, converge, pollEvery)
	// A new client discovers the new group.
	c, err := client.New(m.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createNamespace creates namespace name on the hub.
func createNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("failed to create namespace %s on the hub: %v", name, err)
	}
}

// putMemberSecret stores m's kubeconfig in Secret ns/name on the hub, the
// shape a Cluster's spec.secretRef names, bound to m by its label.
func putMemberSecret(t *testing.T, c client.Client, ns, name string, m *testenv.Member) {
	t.Helper()
	data, err := os.ReadFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := kubeCtx()
	defer cancel()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{workv1alpha1.LabelCredentialsFor: m.Name}},
		Data: map[string][]byte{"kubeconfig": data}}
	if err := c.Create(ctx, s); err != nil {
		t.Fatalf("failed to create Secret %s/%s on the hub: %v", ns, name, err)
	}
}

// newCRStatusReader reads the Work CRs in ns on the hub.
func newCRStatusReader(t *testing.T, c client.Client, ns string) *statusReader {
	store := crstore.New(c, ns)
	return &statusReader{t: t, store: store, state: store}
}

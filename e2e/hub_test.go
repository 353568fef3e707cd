package e2e

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
)

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

package e2etest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// ModuleRoot is the folder of the propagit module (holding cmd/ and
// deploy/): the nearest one above the working directory, which is the
// package's folder when go test runs a package, that holds a go.mod.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod in %s or above", wd)
		}
	}
}

// WorkCRD is the file of the Work CustomResourceDefinition as deployed.
func WorkCRD(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "crds", "propagit.io_works.yaml")
}

// NewClient returns a client of cfg whose scheme holds what adds add. A
// client made after a CRD is served discovers its group.
func NewClient(t testing.TB, cfg *rest.Config, adds ...func(*runtime.Scheme) error) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range adds {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// HubClient returns a client of the hub at cfg that knows Works, Secrets,
// Namespaces and CRDs.
func HubClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	return NewClient(t, cfg, apiextensionsv1.AddToScheme, corev1.AddToScheme, coordinationv1.AddToScheme, workv1alpha1.AddToScheme)
}

// StartHub makes m a hub: it installs the Work CRD from deploy/, waits,
// polling every interval up to timeout, until it is served, creates the
// namespaces, and returns a HubClient of m.
func StartHub(t testing.TB, m *testenv.Member, timeout, interval time.Duration, namespaces ...string) client.Client {
	t.Helper()
	InstallCRD(t, m, WorkCRD(t), timeout, interval)
	c := HubClient(t, m.Config)
	for _, ns := range namespaces {
		CreateNamespace(t, c, ns)
	}
	return c
}

// CreateNamespace creates namespace name on the hub.
func CreateNamespace(t testing.TB, c client.Client, name string) {
	t.Helper()
	ctx, cancel := KubeCtx()
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("failed to create namespace %s on the hub: %v", name, err)
	}
}

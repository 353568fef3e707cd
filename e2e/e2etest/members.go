package e2etest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/testenv"
)

// KubeconfigDir copies each member's kubeconfig to <dir>/<name>.kubeconfig,
// the layout of --kubeconfig-dir, and returns dir.
func KubeconfigDir(t testing.TB, members ...*testenv.Member) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range members {
		data, err := os.ReadFile(m.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.Name+".kubeconfig"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// InstallCRD creates the CustomResourceDefinition in the file at path on
// m and waits, polling every interval up to timeout, until it is
// Established and discovery lists it. A client made afterwards discovers
// its group.
func InstallCRD(t testing.TB, m *testenv.Member, path string, timeout, interval time.Duration) {
	t.Helper()
	c := NewClient(t, m.Config, apiextensionsv1.AddToScheme)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("failed to decode %s: %v", path, err)
	}
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 30*time.Second)
	}
	ctx, cancel := call()
	defer cancel()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatalf("failed to create the CRD of %s: %v", path, err)
	}
	Eventually(t, timeout, interval, func() (bool, string) {
		ctx, cancel := call()
		defer cancel()
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err.Error()
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("CRD %s not established: %+v", crd.Name, crd.Status.Conditions)
	})
	// Established comes before discovery lists the resource; a client made
	// in between would find no match for its kind.
	ctx, cancel = context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		if err := testenv.WaitServed(ctx, m.Config, gv, crd.Spec.Names.Plural); err != nil {
			t.Fatal(err)
		}
	}
}

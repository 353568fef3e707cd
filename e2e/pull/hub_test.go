package pull

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// workCRD is the Work CRD as deployed.
const workCRD = "../../deploy/crds/propagit.io_works.yaml"

// hubScheme knows Works, Namespaces and CRDs.
func hubScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, corev1.AddToScheme, workv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// hubClient returns a client of the hub at cfg.
func hubClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: hubScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// makeHub installs the Work CRD from deploy/ on m, waits until it is
// served, and creates namespace ns for the Works.
func makeHub(t testing.TB, m *testenv.Member, ns string) {
	t.Helper()
	c := hubClient(t, m.Config)
	e2etest.InstallCRD(t, m, workCRD, converge, pollEvery)
	ctx, cancel := kubeCtx()
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("failed to create namespace %s on the hub: %v", ns, err)
	}
}

// workObjects returns the names of the objects in cluster's Work, as
// recorded in store.
func workObjects(store agent.Source, cluster string) ([]string, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	w, err := store.ListCluster(ctx, cluster)
	if err != nil || w == nil {
		return nil, err
	}
	objs, err := workv1alpha1.Objects(w)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(names)
	return names, nil
}

// clusterReady returns the status (True, False, Unknown) whose
// propagit_cluster_ready_condition series is 1 for cluster, "" when none.
func clusterReady(reg *prometheus.Registry, cluster string) (string, error) {
	families, err := reg.Gather()
	if err != nil {
		return "", err
	}
	for _, f := range families {
		if f.GetName() != "propagit_cluster_ready_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["cluster"] == cluster && m.GetGauge().GetValue() == 1 {
				return labels["status"], nil
			}
		}
	}
	return "", nil
}

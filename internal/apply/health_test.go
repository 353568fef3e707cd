package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestHealth(t *testing.T) {
	m := newTestManager(t)
	ns := uniqueNS("health")
	cm, dep := configMap(t, ns, "conf", "1"), deployment(t, ns, "web", "nginx:1")
	res := mustApply(t, m, []*unstructured.Unstructured{cm, dep}, nil)
	missing := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "Secret", Namespace: ns, Name: "missing"}, Version: "v1"}
	gone := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Group: "gone.propagit.io", Kind: "Gone", Namespace: ns, Name: "x"}, Version: "v1"}

	got, err := m.Health(t.Context(), append(res.Inventory, missing, gone))
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	health := map[string]workv1alpha1.Health{}
	for _, r := range got {
		health[fmtRef(r.ObjectRef)] = r.Health
		t.Logf("%s: %s %q", fmtRef(r.ObjectRef), r.Health, r.Message)
	}
	// The test member runs no controller-manager: nothing ever observes the
	// Deployment, so kstatus keeps it InProgress.
	want := map[string]workv1alpha1.Health{
		"ConfigMap/" + ns + "/conf":          workv1alpha1.HealthCurrent,
		"Deployment.apps/" + ns + "/web":     workv1alpha1.HealthInProgress,
		"Secret/" + ns + "/missing":          workv1alpha1.HealthNotFound,
		"Gone.gone.propagit.io/" + ns + "/x": workv1alpha1.HealthNotFound,
	}
	if diff := cmp.Diff(want, health); diff != "" {
		t.Fatalf("health (-want +got):\n%s", diff)
	}
}

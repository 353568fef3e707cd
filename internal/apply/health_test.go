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
	missing := workv1alpha1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: ns, Name: "missing"}
	gone := workv1alpha1.ObjectRef{Group: "gone.propagit.io", Version: "v1", Kind: "Gone", Namespace: ns, Name: "x"}

	got, err := m.Health(t.Context(), append(res.Inventory, missing, gone))
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	health := map[string]string{}
	for _, r := range got {
		health[fmtRef(r.ObjectRef)] = r.Health
		t.Logf("%s: %s %q", fmtRef(r.ObjectRef), r.Health, r.Message)
	}
	// The test member runs no controller-manager: nothing ever observes the
	// Deployment, so kstatus keeps it InProgress.
	want := map[string]string{
		"ConfigMap/" + ns + "/conf": HealthCurrent,
		"Deployment/" + ns + "/web": HealthInProgress,
		"Secret/" + ns + "/missing": HealthNotFound,
		"Gone/" + ns + "/x":         HealthNotFound,
	}
	if diff := cmp.Diff(want, health); diff != "" {
		t.Fatalf("health (-want +got):\n%s", diff)
	}
}

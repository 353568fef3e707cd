package dashboard

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/crstore"
)

// TestDashboardCRStore: the dashboard reads Work custom resources and
// their status through the CR store (over a fake hub client: the store is
// tested against a real apiserver in internal/works) exactly as it reads
// the Git store: members, revision and the drift event.
func TestDashboardCRStore(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := workv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := clientgoscheme.AddToScheme(scheme); err != nil { // the store makes each member's namespace
		t.Fatal(err)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&workv1alpha1.Work{}).Build()
	cr := crstore.New(hub, "propagit-system")
	ctx := context.Background()
	d := deployment("demo", "nginx", 2)
	var ws []*workv1alpha1.Work
	for _, name := range []string{"member1", "member2"} {
		raw, err := workv1alpha1.EncodeManifests([]*unstructured.Unstructured{d})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: name, SourceRevision: rev1, Manifests: raw}})
	}
	if _, err := cr.Put(ctx, rev1, ws); err != nil {
		t.Fatal(err)
	}
	st := readyStatus(rev1, time.Now(), d)
	st.Drift = []workv1alpha1.DriftRecord{{ObjectRef: st.Objects[0].ObjectRef, Fields: []string{".spec.replicas"}, Manager: "kubectl-edit",
		Action: workv1alpha1.DriftCorrected}}
	st.Drift[0].Time.Time = time.Now()
	if err := cr.PutStatus(ctx, "member1", st); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Works, opts.Status = cr, cr
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	_, body := get(t, ts, "/")
	mustContain(t, between(body, `data-member="member1"`, "</tr>"), `data-state="Ready"`, workv1alpha1.ShortRevision(rev1))
	mustContain(t, between(body, `data-member="member2"`, "</tr>"), `data-state="Unknown"`) // no status yet
	_, body = get(t, ts, "/events")
	mustContain(t, between(body, `data-kind="Drift"`, "</tr>"), "member1", "Deployment.apps/demo/nginx", "Corrected: .spec.replicas (by kubectl-edit)")
}

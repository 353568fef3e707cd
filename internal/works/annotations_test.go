package works

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// annotated returns the Works of fleet(2, 1, rev, "a") with c0 annotated
// as ready (the readiness a render saw).
func annotated(rev, ready string) []*workv1alpha1.Work {
	ws := fleet(2, 1, rev, "a")
	ws[0].Annotations = map[string]string{workv1alpha1.AnnotationClusterReady: ready}
	return ws
}

// checkAnnotationSteps puts Works whose only change is propagit's
// annotations: each change is written (and only to that Work), and read
// back.
func checkAnnotationSteps(t *testing.T, s Store) {
	t.Helper()
	ctx := ctxT(t)
	for _, step := range []struct {
		rev, ready  string
		wantChanged []string
	}{
		{"rev1", "True", []string{"c0", "c1"}},
		{"rev1", "True", nil},
		{"rev2", "Unknown", []string{"c0"}},
		{"rev3", "Unknown", nil},
	} {
		changed, err := s.Put(ctx, step.rev, annotated(step.rev, step.ready))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.wantChanged, changed); diff != "" {
			t.Errorf("Ready %s at %s: changed (-want +got):\n%s", step.ready, step.rev, diff)
		}
		ws, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := ws[0].Annotations[workv1alpha1.AnnotationClusterReady]; got != step.ready {
			t.Errorf("Ready %s at %s: stored %q", step.ready, step.rev, got)
		}
	}
}

func TestGitStoreRecordsAnnotations(t *testing.T) {
	checkAnnotationSteps(t, fileRemote(t).store(t))
}

// TestCRStoreRecordsAnnotations also pins that annotations other tools set
// on a Work custom resource are kept and never reported back.
func TestCRStoreRecordsAnnotations(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	s := NewCRStore(c, hubNamespace(t, c))
	ctx := ctxT(t)
	ns := workv1alpha1.MemberNamespacePrefix + "c0"
	checkAnnotationSteps(t, s)
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c0"}, w); err != nil {
		t.Fatal(err)
	}
	w.Annotations["example.com/owner"] = "team-a"
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Put(ctx, "rev4", annotated("rev4", "False")); err != nil || !slices.Equal(changed, []string{"c0"}) {
		t.Fatalf("Put = %v, %v; want c0 changed", changed, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c0"}, w); err != nil {
		t.Fatal(err)
	}
	// The store's own bookkeeping (which Put wrote last) is recorded too.
	if w.Annotations[workv1alpha1.AnnotationRecordedSequence] == "" {
		t.Errorf("no %s annotation on the written Work", workv1alpha1.AnnotationRecordedSequence)
	}
	delete(w.Annotations, workv1alpha1.AnnotationRecordedSequence)
	want := map[string]string{"example.com/owner": "team-a", workv1alpha1.AnnotationClusterReady: "False"}
	if diff := cmp.Diff(want, w.Annotations); diff != "" {
		t.Errorf("stored annotations (-want +got):\n%s", diff)
	}
	ws, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{workv1alpha1.AnnotationClusterReady: "False"}, ws[0].Annotations); diff != "" {
		t.Errorf("listed annotations, propagit's only (-want +got):\n%s", diff)
	}
}

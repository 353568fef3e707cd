package crstore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// TestCRStoreMovesLegacyWorks: a Work an earlier version kept in the
// controller's namespace is listed (the previous placement survives the
// upgrade), and the next Put moves it, status included, to its member's
// namespace; the move alone is no change to report.
func TestCRStoreMovesLegacyWorks(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	ctx := ctxT(t)
	legacy := hubNamespace(t, c)
	old := fleet(1, 2, "rev1", "a")[0]
	old.Namespace = legacy
	old.Labels = map[string]string{workv1alpha1.LabelCluster: "c0"}
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	old.Status = *testStatus("rev1", metav1.ConditionTrue, t0)
	if err := c.Status().Update(ctx, old); err != nil {
		t.Fatal(err)
	}
	s := New(c, legacy)
	listed, err := s.List(ctx)
	if err != nil || len(listed) != 1 || listed[0].Namespace != legacy {
		t.Fatalf("List before the move = %v, %v; want the legacy Work", listed, err)
	}
	changed, err := s.Put(ctx, "rev2", fleet(1, 2, "rev2", "a"))
	if err != nil || len(changed) != 0 {
		t.Fatalf("Put of the same content = %v, %v; want no change", changed, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(old), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("the legacy Work is still there: %v", err)
	}
	got, err := s.GetStatus(ctx, "c0")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(works.Normalize(&old.Status), works.Normalize(got)); d != "" {
		t.Errorf("moved status (-want +got):\n%s", d)
	}
	if w, err := s.ListCluster(ctx, "c0"); err != nil || w == nil || w.Namespace != workv1alpha1.MemberNamespacePrefix+"c0" {
		t.Errorf("ListCluster after the move = %v, %v", w, err)
	}
}

// TestCRStoreReadsOnlyMemberNamespaces: a labelled Work in a namespace
// that is not its cluster's (written by anyone who may write Works there)
// is no record of that cluster: neither listed nor read for status, and
// Put leaves it alone.
func TestCRStoreReadsOnlyMemberNamespaces(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	ctx := ctxT(t)
	s := New(c, hubNamespace(t, c))
	if _, err := s.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	// c0's namespace holds a Work claiming to be c1's.
	forged := fleet(2, 1, "rev9", "forged")[1]
	forged.Namespace = workv1alpha1.MemberNamespacePrefix + "c0"
	forged.Labels = map[string]string{workv1alpha1.LabelCluster: "c1"}
	if err := c.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	forged.Status = *testStatus("rev9", metav1.ConditionFalse, t0)
	if err := c.Status().Update(ctx, forged); err != nil {
		t.Fatal(err)
	}
	ws, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Spec.SourceRevision != "rev1" || w.Namespace != workv1alpha1.MemberNamespacePrefix+w.Spec.Cluster {
			t.Errorf("List returned %s/%s at %s", w.Namespace, w.Name, w.Spec.SourceRevision)
		}
	}
	if st, err := s.GetStatus(ctx, "c1"); err != nil || st.AppliedRevision != "" {
		t.Errorf("status of c1 = %+v, %v; want c1's own (none)", st, err)
	}
	if _, err := s.Put(ctx, "rev2", fleet(1, 1, "rev2", "b")); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(forged), &workv1alpha1.Work{}); err != nil {
		t.Errorf("Put touched the Work it does not own: %v", err)
	}
	nsObj := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: workv1alpha1.MemberNamespacePrefix + "c0"}, nsObj); err != nil ||
		nsObj.Labels[workv1alpha1.LabelCluster] != "c0" {
		t.Errorf("member namespace of c0 = %v, %v; want labelled %s=c0", nsObj.Labels, err, workv1alpha1.LabelCluster)
	}
}

func TestMemberNamespaceRefusesNonLabels(t *testing.T) {
	for _, name := range []string{"a.b", "", "A", "a/b", strings.Repeat("c", 48)} {
		if ns, err := workv1alpha1.MemberNamespace(name); err == nil {
			t.Errorf("MemberNamespace(%q) = %q, want an error", name, ns)
		}
	}
	long := strings.Repeat("c", 47)
	if ns, err := workv1alpha1.MemberNamespace(long); err != nil || len(ns) != 63 {
		t.Errorf("MemberNamespace of 47 characters = %q, %v", ns, err)
	}
}
